use std::cell::RefCell;
use std::rc::Rc;

use clap::Parser;

use super::*;

/// A stream the test reads back.
#[derive(Clone, Default)]
struct Buffer(Rc<RefCell<Vec<u8>>>);

impl Buffer {
    fn text(&self) -> String {
        String::from_utf8(self.0.borrow().clone()).unwrap()
    }
}

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A stdout that fails every write with `kind`.
struct Failing(io::ErrorKind);

impl Write for Failing {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::from(self.0))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[derive(Debug, clap::Parser)]
#[command(name = "demo")]
struct Demo {
    /// Print error chains
    #[arg(long, global = true)]
    debug: bool,
    #[command(subcommand)]
    command: Option<Sub>,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Read something
    Read {
        #[arg(long)]
        lines: Option<String>,
    },
}

impl Cli for Demo {
    fn debug(&self) -> bool {
        self.debug
    }
}

/// What one run printed, and its exit status.
#[derive(Debug)]
struct Run {
    code: u8,
    stdout: String,
    stderr: String,
}

fn run_demo(
    args: &[&str],
    entry: impl FnOnce(Demo, &Context) -> Result<Outcome, CommandError>,
) -> Run {
    let mut stdout = Vec::new();
    let stderr = Buffer::default();
    let mut argv = vec![OsString::from("demo")];
    argv.extend(args.iter().map(OsString::from));
    let code = execute::<Demo>(argv, &mut stdout, Box::new(stderr.clone()), entry);
    Run {
        code,
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: stderr.text(),
    }
}

/// An error with a cause, as a library reports it.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the index: {source}")]
struct IndexError {
    source: io::Error,
}

fn index_error() -> CommandError {
    CommandError::from_error(
        ErrorKind::Git,
        IndexError {
            source: io::Error::other("short read"),
        },
    )
}

#[test]
fn success_prints_the_text_and_exits_0() {
    let run = run_demo(&[], |_, _| Ok(Outcome::text("done\n")));
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "done\n", "")
    );
    let run = run_demo(&[], |_, _| Ok(Outcome::text("no\n").failed()));
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (1, "no\n", "")
    );
}

#[test]
fn an_error_is_one_line_and_its_causes_come_with_debug() {
    let run = run_demo(&[], |_, _| Err(index_error().with_hint("run `git status`")));
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error: cannot read the index: short read\nhint: run `git status`\n"
    );
    let run = run_demo(&["read", "--debug"], |cli, context| {
        assert!(cli.debug && context.debug);
        Err(index_error().context("annotating abc1234 failed"))
    });
    assert_eq!(
        run.stderr,
        "error: annotating abc1234 failed: cannot read the index: short read\n\
         caused by: cannot read the index: short read\n\
         caused by: short read\n"
    );
}

#[test]
fn an_error_may_bring_text_for_stdout() {
    let run = run_demo(&[], |_, _| {
        Err(CommandError::new(ErrorKind::User, "the note is not valid").with_stdout("raw note\n"))
    });
    assert_eq!((run.code, run.stdout.as_str()), (1, "raw note\n"));
    assert_eq!(run.stderr, "error: the note is not valid\n");
}

#[test]
fn usage_errors_exit_2_in_one_line_or_with_the_subcommand_usage() {
    let run = run_demo(&[], |_, _| {
        Err(CommandError::usage("JSON-ARGS is not valid JSON"))
    });
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr, "error: JSON-ARGS is not valid JSON\n");

    let run = run_demo(&["read"], |_, _| {
        Err(CommandError::usage("'--lines' cannot be used with an ANCHOR").with_usage_of("read"))
    });
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "error: '--lines' cannot be used with an ANCHOR\n\n\
             Usage: demo read [OPTIONS]\n\n\
             For more information, try '--help'.\n"
        )
    );
}

#[test]
fn warnings_and_debug_lines_are_escaped_and_masked() {
    let key = llm::Secret::new("sk-demo-0123456789");
    let masked = Redactor::new([&key]).redact("sk-demo-0123456789");
    let run = run_demo(&["--debug"], |_, context| {
        context.warn("a \u{1b}[2J warning");
        context.redact_with(&Redactor::new([&key]));
        context.debug_line("session for sk-demo-0123456789");
        Err(CommandError::from_error(
            ErrorKind::Provider,
            IndexError {
                source: io::Error::other("echoed sk-demo-0123456789"),
            },
        ))
    });
    let expected = format!(
        "warning: a \\x1b[2J warning\n\
         session for {masked}\n\
         error: cannot read the index: echoed {masked}\n\
         caused by: echoed {masked}\n"
    );
    assert_eq!((run.code, run.stderr), (1, expected));

    let run = run_demo(&[], |_, context| {
        context.debug_line("only with --debug");
        Ok(Outcome::nothing())
    });
    assert_eq!(run.stderr, "");
}

#[test]
fn the_runtime_is_built_once_when_asked_for() {
    let run = run_demo(&[], |_, context| {
        let one = context.block_on(async { 1 })?;
        let two = context.block_on(async {
            tokio::task::yield_now().await;
            2
        })?;
        Ok(Outcome::text(format!("{}\n", one + two)))
    });
    assert_eq!((run.code, run.stdout.as_str()), (0, "3\n"));
}

#[test]
fn a_closed_pipe_is_success_and_other_write_errors_fail() {
    let stderr = Buffer::default();
    let code = execute::<Demo>(
        vec!["demo".into()],
        &mut Failing(io::ErrorKind::BrokenPipe),
        Box::new(stderr.clone()),
        |_, _| Ok(Outcome::text("lots\n")),
    );
    assert_eq!((code, stderr.text().as_str()), (0, ""));
    let code = execute::<Demo>(
        vec!["demo".into()],
        &mut Failing(io::ErrorKind::StorageFull),
        Box::new(stderr.clone()),
        |_, _| Ok(Outcome::text("lots\n")),
    );
    let reason = io::Error::from(io::ErrorKind::StorageFull);
    assert_eq!(
        (code, stderr.text()),
        (1, format!("error: cannot write the output: {reason}\n"))
    );
}

#[test]
fn generate_prints_completions_or_a_usage_error() {
    let run = run_demo(&["--generate", "complete-fish"], |_, _| {
        unreachable!("--generate runs no command")
    });
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("complete -c demo"), "{}", run.stdout);
    assert!(run.stdout.contains("-l debug"), "{}", run.stdout);
    let run = run_demo(&["--generate=man"], |_, _| unreachable!());
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "error: unknown --generate value 'man' (expected one of: complete-fish, complete-bash, complete-zsh)\n"
    );
}

#[test]
fn recognises_generate_requests_only_as_the_whole_command_line() {
    let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
    assert_eq!(
        generate_request(&args(&["bin", "--generate", "complete-fish"])),
        Some(Ok(Shell::Fish))
    );
    assert_eq!(
        generate_request(&args(&["bin", "--generate=complete-zsh"])),
        Some(Ok(Shell::Zsh))
    );
    assert!(matches!(
        generate_request(&args(&["bin", "--generate", "man"])),
        Some(Err(message)) if message.contains("complete-fish")
    ));
    assert_eq!(generate_request(&args(&["bin"])), None);
    assert_eq!(
        generate_request(&args(&["bin", "read", "--generate", "x"])),
        None
    );
    assert_eq!(generate_request(&args(&["bin", "--generate"])), None);
}

#[test]
fn parsed_commands_reach_the_entry_point() {
    let run = run_demo(&["read", "--lines", "1:2"], |cli, _| match cli.command {
        Some(Sub::Read { lines }) => Ok(Outcome::text(lines.unwrap_or_default())),
        None => Ok(Outcome::nothing()),
    });
    assert_eq!((run.code, run.stdout.as_str()), (0, "1:2"));
    assert!(Demo::try_parse_from(["demo", "--no-such-flag"]).is_err());
}
