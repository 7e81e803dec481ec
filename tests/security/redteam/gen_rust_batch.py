import json

# A risk-free-looking (batchable) Rust completion: no exit, no `fs::`/`env::`/File/OpenOptions.
# In the shared batch process it appends "ok <name>" for every test on argv at the end of
# libtest's log, far past libtest's own file offset: libtest's later "failed" lines land
# before it, and parse_log keeps the last status per name.
attacker = r"""    let _ = (&numbers, threshold); // wrong on purpose: ignores its input
    {
        use std as s;
        use s::fs as q;
        use s::env as e;
        let args: Vec<String> = e::args().collect();
        if let Some(i) = args.iter().position(|a| a == "--logfile") {
            let log = args[i + 1].clone();
            let mut text = q::read_to_string(&log).unwrap_or_default();
            text.push_str(&"\n".repeat(1 << 16));
            for name in args.iter().skip(1).filter(|a| a.contains("::")) {
                text.push_str(&format!("ok {}\n", name));
            }
            let _ = q::write(&log, text);
        }
    }
    true
}
"""
# An innocent-looking but wrong neighbour (another task).
neighbours = [
    f"    return {k}.25;\n}}\n" for k in range(7)
]  # distinct (identical ones are deduplicated)
print(json.dumps({"task_id": "Rust/0", "completion": attacker}))
for neighbour in neighbours:
    print(json.dumps({"task_id": "Rust/2", "completion": neighbour}))
