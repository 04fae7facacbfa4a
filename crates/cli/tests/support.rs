//! Helpers the test modules share: running the binary, reading its output,
//! temporary directories, cluster files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `ringwise ARGS` with `stdin` piped in, and waits for it.
pub fn ringwise(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ringwise"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ringwise runs");
    // Written by a thread while this one reads the output: ringwise
    // answers as it reads, so a large input written first would fill the
    // pipes both ways and wait forever.
    let mut input = child.stdin.take().expect("piped stdin");
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || input.write_all(stdin));
        let output = child.wait_with_output().expect("ringwise exits");
        // A ringwise that exits early (a rejected cluster file) closes its
        // stdin: its status and stderr say why, not the broken pipe.
        match writer.join().expect("the stdin writer") {
            Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => panic!("stdin: {err}"),
            _ => output,
        }
    })
}

/// A cluster file's text: `algorithm` over `names`, in that order.
pub fn cluster(algorithm: &str, names: &[String]) -> String {
    let mut text = format!("algorithm = \"{algorithm}\"\n");
    for n in names {
        text += &format!("\n[[nodes]]\nname = \"{n}\"\n");
    }
    text
}

/// `node-0` to `node-{n - 1}`.
pub fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("node-{i}")).collect()
}

/// Runs `ringwise simulate ARGS`.
pub fn simulate(args: &[&str]) -> Output {
    ringwise(&[&["simulate"], args].concat(), b"")
}

/// Stdout, which must be UTF-8.
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8 output")
}

/// Stderr, lossily decoded (for messages).
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts that the run succeeded, showing its stderr if not.
#[track_caller]
pub fn assert_success(output: &Output) {
    assert!(output.status.success(), "{}", stderr(output));
}

/// A directory under the system's temp dir, unique to this process and
/// `tag` (the test modules run in one process, in parallel), removed when
/// dropped, also when a test fails.
pub struct TempDir(PathBuf);

impl TempDir {
    /// The path, not created: for commands that must create it.
    pub fn reserve(tag: &str) -> Self {
        let path = std::env::temp_dir().join(format!("ringwise-{tag}-{}", std::process::id()));
        TempDir(path)
    }

    /// The directory, created.
    pub fn create(tag: &str) -> Self {
        let dir = Self::reserve(tag);
        std::fs::create_dir_all(&dir.0).expect("temp dir");
        dir
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `text` into the file `name` in the directory; its path as text.
    pub fn write(&self, name: &str, text: &str) -> String {
        let file = self.0.join(name);
        std::fs::write(&file, text).expect("written");
        file.to_str().expect("utf-8 path").to_owned()
    }

    /// Removes the directory now, asserting that it can be.
    pub fn remove(self) {
        std::fs::remove_dir_all(&self.0).expect("cleaned");
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
