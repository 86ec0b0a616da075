// Command asrpt schedules GPU deep-learning jobs on Slurm by prediction-
// assisted shortest remaining processing time, and replays accounting
// history through that policy and the usual ones.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/asrpt/asrpt/internal/buildinfo"
)

// command is one subcommand. run gets the arguments after the subcommand
// name and writes its results to stdout; it returns an error instead of
// exiting so that tests can drive it.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the registry of subcommands; each file of this package adds
// its own from an init function.
var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	if _, dup := commands[name]; dup {
		panic("asrpt: subcommand registered twice: " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

// errUsage marks an error caused by the command line; main exits 2 for it.
var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: asrpt COMMAND [flags]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'asrpt COMMAND -h' for the flags of one command.")
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		fmt.Fprintln(stdout, buildinfo.Get())
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "asrpt: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := cmd.run(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "asrpt %s: %s\n", args[0], errorText(args[0], err))
		return 2
	default:
		fmt.Fprintf(stderr, "asrpt %s: %s\n", args[0], errorText(args[0], err))
		return 1
	}
}

// errorText is err's message without a leading "cmd: ", which a package
// of the same name as the command puts there ("asrpt sidecar: sidecar:
// …" said it twice).
func errorText(cmd string, err error) string {
	return strings.TrimPrefix(err.Error(), cmd+": ")
}

// plural is n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// newFlagSet returns a flag set for a subcommand that reports errors as
// values rather than exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("asrpt "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and wraps a flag error as a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		// --json prints JSON on stdout everywhere; a file is --out.
		if i := len(args) - fs.NArg(); i > 0 && (args[i-1] == "--json" || args[i-1] == "-json") && fs.Lookup("out") != nil {
			return fmt.Errorf("%w: --json takes no file (it prints JSON on stdout): write %q with --out", errUsage, fs.Arg(0))
		}
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}
