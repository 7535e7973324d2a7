//! Network namespaces and their configuration, through iproute2's `ip` (std::process::Command).
//!
//! Safety on a shared machine: everything is named with `PREFIX`
//! and the pid of the run that made it; a namespace of ours whose pid is gone is a killed run's
//! leftover and is removed at the next start. Nothing outside namespaces we made is touched.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Command, Stdio};

/// Every namespace this crate makes is `PREFIX<pid><side>`, side `s` (server) or `c` (client).
pub const PREFIX: &str = "hfcemu";

/// The namespace of `side` ('s' or 'c') for the run with process id `pid`.
pub fn name(pid: u32, side: char) -> String {
    format!("{PREFIX}{pid}{side}")
}

/// The pid in one of our namespace names, if it is one.
pub fn pid_of(ns: &str) -> Option<u32> {
    let rest = ns.strip_prefix(PREFIX)?;
    let digits = rest.strip_suffix('s').or_else(|| rest.strip_suffix('c'))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn run(cmd: &mut Command) -> io::Result<String> {
    let out = cmd.stdin(Stdio::null()).output()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(io::Error::other(format!("{:?}: {}", cmd, err.trim())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `ip -n NS -batch -` with `lines` on its stdin: one process for any number of commands.
pub fn ip_batch(ns: &str, lines: &[String]) -> io::Result<()> {
    let mut child = Command::new("ip")
        .args(["-n", ns, "-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    {
        let mut stdin = child.stdin.take().expect("piped");
        for l in lines {
            writeln!(stdin, "{l}")?;
        }
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(io::Error::other(format!("ip -n {ns} -batch: {}", err.trim())));
    }
    Ok(())
}

/// The names in `ip netns list`.
pub fn list() -> io::Result<Vec<String>> {
    let out = run(Command::new("ip").args(["netns", "list"]))?;
    // Lines are "NAME" or "NAME (id: N)".
    Ok(out.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_owned).collect())
}

pub fn add(ns: &str) -> io::Result<()> {
    run(Command::new("ip").args(["netns", "add", ns])).map(drop)
}

/// Remove namespace `ns` (ours) after killing, by pid, any process still inside it: only a
/// killed run's workload can be there.
pub fn delete(ns: &str) -> io::Result<()> {
    debug_assert!(pid_of(ns).is_some(), "{ns} is not ours");
    if let Ok(pids) = run(Command::new("ip").args(["netns", "pids", ns])) {
        for pid in pids.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
            // SAFETY: kill(2) with a pid read from our own namespace.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    run(Command::new("ip").args(["netns", "del", ns])).map(drop)
}

/// Whether process `pid` still runs. A killed run that its parent has not reaped yet is a zombie:
/// its `/proc/PID` stays until the reap, but it runs nothing and holds nothing (issue 36: a zombie's
/// namespaces were kept as if it lived). So the state in `/proc/PID/stat` decides, not the folder.
fn alive(pid: u32) -> bool {
    running(std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().as_deref())
}

/// Whether a process whose `/proc/PID/stat` reads `stat` (None: no such file, no such process) is
/// running. proc(5): the third field is the state, after the command name in parentheses, which may
/// itself hold spaces and parentheses, so it is read after the last ')'. Z (zombie) and X (dead) are
/// gone; any other state (R, S, D, T, t, W, I, P, ...) is a live process. An unreadable line counts as
/// alive (chosen: a namespace is removed only when its run is surely gone).
fn running(stat: Option<&str>) -> bool {
    let Some(stat) = stat else { return false };
    let state = stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().next());
    !matches!(state, Some("Z" | "X" | "x"))
}

/// Remove the namespaces with our prefix whose run is gone (killed runs' leftovers); only those.
/// Returns the names removed.
pub fn remove_stale() -> io::Result<Vec<String>> {
    let mut removed = Vec::new();
    for ns in list()? {
        match pid_of(&ns) {
            Some(pid) if !alive(pid) => {
                delete(&ns)?;
                removed.push(ns);
            }
            _ => {}
        }
    }
    Ok(removed)
}

/// Run `f` on a thread of its own that has entered namespace `ns` (setns(2) on /run/netns/NS):
/// the caller's threads never change namespace. Used to create the TUN devices inside it (they
/// never appear in the root namespace) and to write its sysctls.
pub fn inside<T: Send>(ns: &str, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
    let path = format!("/run/netns/{ns}");
    let file: OwnedFd = std::fs::File::open(&path)?.into();
    std::thread::scope(|s| {
        s.spawn(move || {
            // SAFETY: setns on an open namespace file, for this thread only (CLONE_NEWNET may be
            // entered by one thread of a multi-threaded process).
            if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(io::Error::last_os_error());
            }
            f()
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("thread inside the namespace panicked")))
    })
}

/// Write `value` to the sysctl `key` (dotted, e.g. net.ipv4.tcp_sack) of namespace `ns`.
pub fn sysctl(ns: &str, key: &str, value: &str) -> io::Result<()> {
    if !key.starts_with("net.") || key.contains("..") || key.contains('/') {
        return Err(io::Error::other(format!("{key}: only net.* sysctls, which are per namespace")));
    }
    let path = format!("/proc/sys/{}", key.replace('.', "/"));
    let value = value.to_owned();
    inside(ns, move || {
        std::fs::write(&path, value.as_bytes()).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
    })
}

/// Read `/sys/class/net/DEV/statistics/STAT` as seen inside `ns` (`ip netns exec` mounts the
/// namespace's sysfs).
pub fn device_stat(ns: &str, dev: &str, stat: &str) -> io::Result<u64> {
    let out =
        run(Command::new("ip").args(["netns", "exec", ns, "cat", &format!("/sys/class/net/{dev}/statistics/{stat}")]))?;
    out.trim().parse().map_err(|e| io::Error::other(format!("{dev} {stat}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_names_have_a_pid() {
        assert_eq!(pid_of("hfcemu123s"), Some(123));
        assert_eq!(pid_of("hfcemu7c"), Some(7));
        for other in ["hfcemus", "hfcemu12x", "hfcemu-1s", "emu123s", "hfcemu12", "hfcemu1 2s", "xhfcemu1s"] {
            assert_eq!(pid_of(other), None, "{other}");
        }
        assert_eq!(pid_of(&name(4194304, 's')), Some(4194304));
        // IFNAMSIZ is 16 with the NUL; namespace names have no such limit, but keep them short.
        assert!(name(4194304, 'c').len() <= 15);
    }

    #[test]
    fn a_zombie_or_dead_process_is_not_alive() {
        // proc(5) stat lines: the state follows the last ')', whatever the command name holds.
        for (stat, live) in [
            (Some("4242 (hfcsim) S 1 4242 4242 0 -1 4194560"), true),
            (Some("4242 (hfcsim) R 1"), true),
            (Some("4242 (hfcsim) D 1"), true),
            (Some("4242 (hfcsim) T 1"), true),
            (Some("4242 (hfcsim) Z 1 4242 4242 0 -1 4227084"), false),
            (Some("4242 (hfcsim) X 1"), false),
            (Some("4242 (a) Z (b) S 1"), true), // a name "a) Z (b": the state is S
            (Some("4242 (x) S) Z 1"), false),   // a name "x) S": the state is Z
            (Some("garbled"), true),            // unreadable: kept (never remove a live run's)
            (None, false),                      // no /proc/PID/stat: no such process
        ] {
            assert_eq!(running(stat), live, "{stat:?}");
        }
    }

    #[test]
    fn an_unreaped_child_is_dead_and_we_are_alive() {
        assert!(alive(std::process::id()));
        // A child that has exited and is not yet waited for is a zombie: /proc/PID stays.
        let mut child = Command::new("true").spawn().expect("spawn true");
        let pid = child.id();
        let stat = || std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let mut polls = 0;
        while !stat().contains(") Z ") {
            polls += 1;
            assert!(polls < 100_000, "the child never became a zombie: {}", stat());
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists(), "a zombie keeps /proc/PID");
        assert!(!alive(pid), "a zombie is not alive");
        child.wait().expect("reap");
        assert!(!alive(pid), "a reaped process is gone");
    }
}
