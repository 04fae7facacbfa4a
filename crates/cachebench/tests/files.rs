//! `ringwise-cachebench`'s output is checked like `ringwise`'s:
//! help and `--version` written to a full device fail with 74 and one
//! line (clap's own exit ignored the error and exited 0). The chart goes
//! through the shared atomic writer, `ringwise_sim::files`, whose own
//! tests and `ringwise`'s full-tmpfs tests pin it.

use std::process::{Command, Stdio};

#[test]
fn help_on_a_full_device_exits_74() {
    let Ok(_) = std::fs::metadata("/dev/full") else {
        println!("skipped: no /dev/full here");
        return;
    };
    for args in [["--help"], ["-h"], ["--version"], ["-V"]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let output = Command::new(env!("CARGO_BIN_EXE_ringwise-cachebench"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .expect("ringwise-cachebench runs");
        let message = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(74), "{args:?}: {message}");
        assert_eq!(message.trim_end().lines().count(), 1, "{args:?}: {message}");
        assert!(
            message.to_lowercase().contains("no space left on device"),
            "{args:?}: {message}"
        );
    }
}
