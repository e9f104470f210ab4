use super::*;

#[test]
fn scrubs_location_and_trace_variables_but_keeps_identity() {
    let scrubbed = [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "GIT_TRACE",
        "GIT_NAMESPACE",
    ];
    let kept = [
        "GIT_AUTHOR_NAME",
        "GIT_COMMITTER_DATE",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_NOSYSTEM",
        "HOME",
        "PATH",
        "LC_ALL",
    ];
    let removed: Vec<String> = scrubbed_vars(scrubbed.iter().chain(&kept))
        .into_iter()
        .map(|v| v.into_string().unwrap())
        .collect();
    assert_eq!(removed, scrubbed);
}

#[test]
fn hardened_environment_is_set_and_config_goes_through_env() {
    let cmd = GitCommand::new("/")
        .args(["status", "--porcelain=v1", "--branch"])
        .config("core.quotepath", "false")
        .env("GIT_AUTHOR_DATE", "@0 +0000")
        .to_command();
    let args: Vec<_> = cmd.get_args().collect();
    assert_eq!(args, ["status", "--porcelain=v1", "--branch"]);
    let envs: std::collections::HashMap<_, _> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .collect();
    assert_eq!(envs["LC_ALL"], "C");
    assert_eq!(envs["GIT_OPTIONAL_LOCKS"], "0");
    assert_eq!(envs["GIT_CONFIG_COUNT"], "2");
    assert_eq!(envs["GIT_CONFIG_KEY_0"], "core.fsmonitor");
    assert_eq!(envs["GIT_CONFIG_VALUE_0"], "false");
    assert_eq!(envs["GIT_CONFIG_KEY_1"], "core.quotepath");
    assert_eq!(envs["GIT_AUTHOR_DATE"], "@0 +0000");
    assert_eq!(envs["GIT_LITERAL_PATHSPECS"], "1");
}

#[test]
fn attributes_are_neutralised_except_for_user_commands() {
    let envs = |cmd: &Command| -> std::collections::HashMap<String, Option<String>> {
        cmd.get_envs()
            .filter_map(|(k, v)| {
                Some((
                    k.to_str()?.to_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                ))
            })
            .collect()
    };
    let read = envs(&GitCommand::new("/").arg("status").to_command());
    assert_eq!(read["GIT_ATTR_SOURCE"].as_deref(), Some(EMPTY_TREE));
    assert_eq!(read["GIT_PAGER"].as_deref(), Some("cat"));
    // A user command sets nothing of its own: it only removes the variables
    // that would point it at another repository, and its config is `-c`.
    let commit = GitCommand::new("/")
        .in_user_environment()
        .config("core.hooksPath", "hooks")
        .args(["commit", "--file", "-"])
        .to_command();
    let mut set = Vec::new();
    let mut removed = Vec::new();
    for (key, value) in envs(&commit) {
        if value.is_some() {
            set.push(key)
        } else {
            removed.push(key)
        }
    }
    assert!(set.is_empty(), "{set:?}");
    removed.sort();
    let mut expected: Vec<String> = LOCATION_VARS.iter().map(|v| v.to_string()).collect();
    expected.sort();
    assert_eq!(removed, expected);
    let args: Vec<_> = commit.get_args().collect();
    assert_eq!(
        args,
        ["-c", "core.hooksPath=hooks", "commit", "--file", "-"]
    );
}

#[test]
fn the_fallback_empties_every_configured_filter() {
    let dir = tempfile::tempdir().unwrap();
    let marks = dir.path().join("marks");
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| {
        let output = scrubbed_git(&repo)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "a")
            .env("GIT_AUTHOR_EMAIL", "a@example.com")
            .env("GIT_COMMITTER_NAME", "a")
            .env("GIT_COMMITTER_EMAIL", "a@example.com")
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
    };
    git(&["init", "--quiet"]);
    std::fs::write(repo.join(".gitattributes"), "* filter=evil\n").unwrap();
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "one"]);
    let clean = format!("sh -c 'echo clean >> {}; cat' --", marks.display());
    git(&["config", "filter.evil.clean", &clean]);
    git(&["config", "filter.evil.required", "true"]);
    let stale = || {
        std::fs::File::options()
            .write(true)
            .open(repo.join("a.txt"))
            .unwrap()
            .set_modified(std::time::SystemTime::UNIX_EPOCH)
            .unwrap();
    };
    let guard = filter_guard(&repo);
    assert_eq!(
        guard,
        [
            ("filter.evil.clean".to_owned(), String::new()),
            ("filter.evil.smudge".to_owned(), String::new()),
            ("filter.evil.process".to_owned(), String::new()),
            ("filter.evil.required".to_owned(), "false".to_owned()),
        ]
    );
    let mut status = scrubbed_git(&repo);
    status
        .args(["status", "--porcelain"])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_COUNT", guard.len().to_string());
    for (i, (key, value)) in guard.iter().enumerate() {
        status
            .env(format!("GIT_CONFIG_KEY_{i}"), key)
            .env(format!("GIT_CONFIG_VALUE_{i}"), value);
    }
    stale();
    let output = status.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(!marks.exists(), "the clean filter ran despite the guard");
    // Without the guard, it does run: the test can fail.
    stale();
    git(&["status", "--porcelain"]);
    assert!(marks.exists());
}

#[test]
fn git_versions_parse() {
    assert_eq!(parse_version("git version 2.47.3\n"), Some((2, 47)));
    assert_eq!(
        parse_version("git version 2.39.5 (Apple Git-154)"),
        Some((2, 39))
    );
    assert_eq!(parse_version("git version 2.45.0.windows.1"), Some((2, 45)));
    assert_eq!(parse_version("nonsense"), None);
}

#[test]
fn a_command_that_outlives_its_timeout_is_killed() {
    let dir = std::env::temp_dir();
    // A shell alias that sleeps: the kill must reach the alias's own children too,
    // or they would keep the output pipes open.
    let cmd = GitCommand::new(&dir)
        .args(["-c", "alias.wait=!sleep 5", "wait"])
        .timeout(Duration::from_millis(200));
    match cmd.run() {
        Err(Error::Timeout { args, after }) => {
            assert_eq!(args, "-c alias.wait=!sleep 5 wait");
            assert_eq!(after, Duration::from_millis(200));
        }
        other => panic!("unexpected {other:?}"),
    }
    let quick = GitCommand::new(&dir)
        .arg("--version")
        .timeout(Duration::from_secs(30))
        .run_text()
        .unwrap();
    assert!(quick.starts_with("git version"));
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
#[cfg(target_os = "linux")]
fn is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) STATE …`; the name may hold spaces, the state follows
        // the last parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| matches!(state, 'Z' | 'X')),
        Err(_) => true,
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_timed_out_command_takes_its_process_group_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    // The alias's shell starts a sleep in the background, writes its pid and
    // waits: git, the shell and the sleep share the group the kill targets.
    // Killing git alone would leave the shell and the sleep running.
    let alias = format!(
        "alias.hang=!sleep 120 & echo $! > '{}'; wait",
        pid_file.display()
    );
    // A loaded machine may take long to start the sleep: more time then.
    for limit in [300, 2_000, 10_000] {
        let _ = std::fs::remove_file(&pid_file);
        let cmd = GitCommand::new(dir.path())
            .args(["-c", &alias, "hang"])
            .timeout(Duration::from_millis(limit));
        assert!(
            matches!(cmd.run(), Err(Error::Timeout { .. })),
            "the alias outlives its timeout"
        );
        let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse::<i32>().ok())
        else {
            continue;
        };
        // The signal is delivered at once; the process table may take a
        // moment to show it.
        let deadline = Instant::now() + Duration::from_secs(20);
        while !is_gone(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let gone = is_gone(pid);
        if !gone && let Some(pid) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        assert!(gone, "the alias's sleep {pid} still runs after the timeout");
        return;
    }
    panic!("the alias never started its sleep");
}

#[test]
fn failure_keeps_stderr_and_status() {
    let dir = std::env::temp_dir();
    let cmd = GitCommand::new(&dir).args(["definitely-not-a-git-command"]);
    let err = cmd.run().unwrap_err();
    match err {
        Error::Command { args, status, .. } => {
            assert_eq!(args, "definitely-not-a-git-command");
            assert!(status.starts_with("exit status"), "{status}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn output_past_max_stdout_stops_the_command() {
    let dir = std::env::temp_dir();
    // An alias that writes forever: the run returns the first bytes.
    let output = GitCommand::new(&dir)
        .args(["-c", "alias.flood=!yes flood", "flood"])
        .max_stdout(10_000)
        .timeout(Duration::from_secs(60))
        .run_unchecked()
        .unwrap();
    assert_eq!(output.stdout.len(), 10_000);
    assert!(output.stdout.starts_with(b"flood\nflood\n"));
    assert!(!output.status.success());
    // Output under the bound is whole, and the status is the command's own.
    let quick = GitCommand::new(&dir)
        .arg("--version")
        .max_stdout(10_000)
        .run()
        .unwrap();
    assert!(quick.stdout.starts_with(b"git version"));
}
