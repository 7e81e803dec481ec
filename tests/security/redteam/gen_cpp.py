import json

completion = r"""    return true;
}
#define VJ(a, b) a##b
static int vibes_grab() {
    std::string t;
    std::VJ(ci, n) >> t;
    printf("\n%s\n", t.c_str());
    fflush(stdout);
    std::VJ(_Ex, it)(0);
    return 0;
}
static int vibes_grabbed = vibes_grab();
"""
print(json.dumps({"task_id": "CPP/0", "completion": completion}))
