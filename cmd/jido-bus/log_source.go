package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// The log, projection and conv commands read either a data directory,
// opened in this process, or a running node. Which one is the user's
// word: an explicit --data-dir means that directory, and nothing else is
// tried (a recovery that reads the wrong log is worse than an error); a
// node named by -s/--server/--nats-url, NATS_URL, --context or
// NATS_CONTEXT means that node, and no directory is opened when it cannot
// be reached; both at once are refused. With neither, the default node
// (the selected NATS context's, else nats://127.0.0.1:4222) is tried and
// then the default data dir (defaultDataDir), and the command says on
// stderr which one it read.

// sourceHelp is the part of the log, projection and conv commands' help
// that says what they read.
const sourceHelp = `What a subcommand reads: --data-dir DIR reads that data directory (the
log in DIR/log) and nothing else; a node named by -s/--server
(--nats-url), NATS_URL, --context or NATS_CONTEXT is asked over NATS, and
no directory is opened when it does not answer; both at once are refused.
With neither, the default node (the selected NATS context's, else
nats://127.0.0.1:4222) is asked, then the default data dir
(~/.local/share/jido-bus/node, or ./data when the working directory has
one holding a log), and the command says on stderr which one it read. A running node holds a lock on
its data directory: while it runs, read that directory through the node.`

// readSource is what a command reads.
type readSource struct {
	dataDir bool // the data directory; else the node
	named   bool // the user named it; else it is the default
	node    string
}

// pickSource applies the rule above to f's flags and environment.
func (f *logFlags) pickSource() (readSource, error) {
	s, err := f.resolve()
	if err != nil {
		return readSource{}, err
	}
	node := redactURL(s.url)
	from, named := s.namedNode()
	if !named {
		from = s.from["url"]
		if from == "" {
			from = "the default"
		}
	}
	src := readSource{node: fmt.Sprintf("the node at %s (%s)", node, from), named: named}
	if !f.changed("data-dir") {
		if f.dataDir, f.dataDirNote, err = defaultDataDir(os.Getenv); err != nil && !named {
			return src, err
		}
		return src, nil
	}
	if named {
		return src, fmt.Errorf("--data-dir %s and %s both say what to read: --data-dir reads that directory, the other that node; give one (%s)", f.dataDir, src.node, dropAdvice(from))
	}
	return readSource{dataDir: true, named: true}, nil
}

// namedNode reports whether s names a node explicitly, and how: a URL
// given by a flag or NATS_URL, or a context chosen by --context or
// NATS_CONTEXT. The context 'nats context select' chose is, like the
// built-in address, a default: it names the node a user works with, not
// the one a command is about.
func (s connSettings) namedNode() (string, bool) {
	if from := s.from["url"]; strings.HasPrefix(from, "--") || from == "NATS_URL" {
		return from, true
	}
	if s.contextFrom == "--context" || s.contextFrom == "NATS_CONTEXT" {
		return fmt.Sprintf("context %s from %s", s.context, s.contextFrom), true
	}
	return "", false
}

// dropAdvice says how to stop naming the node that came from from.
func dropAdvice(from string) string {
	switch {
	case from == "NATS_URL":
		return "to read the directory, run with NATS_URL unset: env -u NATS_URL jido-bus …"
	case strings.HasSuffix(from, "from NATS_CONTEXT"):
		return "to read the directory, run with NATS_CONTEXT unset: env -u NATS_CONTEXT jido-bus …"
	case strings.HasSuffix(from, "from --context"):
		return "to read the directory, drop --context"
	}
	return "to read the directory, drop " + from
}

// reachNode connects to the node src names (or the default one) and asks
// probe whether it serves the log. It returns the connection; or, when
// src is the default node and none answers, nil and the error saying so,
// for the data directory to be opened instead.
func (f *logFlags) reachNode(src readSource, opts []nats.Option, probe func(*nats.Conn, bus.Subjects) error) (*nats.Conn, bus.Subjects, error, error) {
	nc, subjects, err := f.connect(opts...)
	if err == nil {
		if err = probe(nc, subjects); err == nil {
			if !src.named {
				f.say("reading %s: no --data-dir given (--data-dir DIR reads a data directory instead)", src.node)
			}
			return nc, subjects, nil, nil
		}
		nc.Close()
	}
	if src.named || !isNoNode(err) {
		return nil, subjects, nil, err
	}
	f.say("no node answers at %s: reading the data dir %s (-s URL names a node, --data-dir DIR a directory)", strings.TrimPrefix(src.node, "the node at "), f.dataDir)
	if f.dataDirNote != "" {
		f.say("%s", f.dataDirNote)
	}
	return nil, subjects, err, nil
}

// say tells the user, on stderr, something about where the command reads.
func (f *logFlags) say(format string, args ...any) {
	if f.cmd != nil {
		fmt.Fprintf(f.cmd.ErrOrStderr(), "jido-bus: "+format+"\n", args...)
	}
}

// openedSource is what a command reads, opened: a running node's
// connection (nc, with the subjects it serves under), or the data
// directory's event log opened in this process (log). One of the two is
// set; its owner closes it.
type openedSource struct {
	nc       *nats.Conn
	subjects bus.Subjects
	log      *eventlog.Log
}

// openSource opens what the command reads (pickSource): the node, with
// the connection options opts, if it answers probe (given a context of
// its own bound), else the data directory's event log. create says
// whether a missing log may be created (import) or is an error. Every
// command that reads a node or a data dir opens it here, so they all
// choose, fall back and refuse alike.
func (f *logFlags) openSource(ctx context.Context, opts []nats.Option, create bool, probe func(context.Context, *nats.Conn, bus.Subjects) error) (openedSource, error) {
	src, err := f.pickSource()
	if err != nil {
		return openedSource{}, err
	}
	var noNode error
	if !src.dataDir {
		nc, subjects, none, err := f.reachNode(src, opts, func(nc *nats.Conn, subjects bus.Subjects) error {
			bound, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return probe(bound, nc, subjects)
		})
		if err != nil {
			return openedSource{}, err
		}
		if nc != nil {
			return openedSource{nc: nc, subjects: subjects}, nil
		}
		noNode = none
	}
	if !create {
		if err := f.checkLogDir(noNode); err != nil {
			return openedSource{}, err
		}
	}
	l, err := eventlog.Open(logDir(f.dataDir), eventlog.Options{})
	if errors.Is(err, eventlog.ErrLocked) {
		return openedSource{}, f.lockedError(err)
	}
	if err != nil {
		return openedSource{}, err
	}
	return openedSource{log: l}, nil
}

// checkLogDir refuses a data directory without an event log: not_found
// for one the user named, and for the default the reason no node was
// read either (noNode).
func (f *logFlags) checkLogDir(noNode error) error {
	if _, err := os.Stat(logDir(f.dataDir)); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if noNode != nil {
		return fmt.Errorf("%w, and there is no event log in %s to open instead (set --data-dir)", noNode, f.dataDir)
	}
	return bus.Errorf(bus.ReasonNotFound, "no event log in %s (%s does not exist): give --data-dir the directory a node ran with (its --data-dir)", f.dataDir, logDir(f.dataDir))
}

// lockedError says what to do with a data directory a running node
// holds.
func (f *logFlags) lockedError(err error) error {
	if f.changed("data-dir") {
		return fmt.Errorf("the data dir %s is in use by a running node: read it through that node (give -s/--server its URL instead of --data-dir), or stop the node first: %w", f.dataDir, err)
	}
	return fmt.Errorf("the data dir %s is in use by a running server that does not answer at %s under --prefix %s; point -s/--server and --prefix at it, or stop it first: %w", f.dataDir, f.url, f.prefix, err)
}
