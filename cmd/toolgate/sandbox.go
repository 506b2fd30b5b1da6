package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/sandbox"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
)

// sandboxStorePostgresEnv holds the sandbox store's PostgreSQL DSN itself (a DSN with a password
// never goes in argv).
const sandboxStorePostgresEnv = "TOOLGATE_SANDBOX_STORE_POSTGRES"

// sandboxSweepEvery is how often a worker removes the workspaces past their retention.
const sandboxSweepEvery = time.Hour

// sandboxStoreFlags pick the store the workspaces are kept in: a directory or PostgreSQL, its
// objects sealed with --codec-key's keys when given.
type sandboxStoreFlags struct{ storeFlags }

// addSandboxStoreFlags adds --sandbox-store and --sandbox-store-postgres-file to cmd; defaultNote
// says what an unset store means for the command.
func addSandboxStoreFlags(cmd *cobra.Command, a *app, f *sandboxStoreFlags, defaultNote string) {
	f.what, f.dirFlag, f.pgFlag, f.postgresEnv = "sandbox store", "sandbox-store", "sandbox-store-postgres-file", sandboxStorePostgresEnv
	f.add(cmd, a, "TOOLGATE_SANDBOX_STORE",
		"keep the sandbox workspaces' snapshots in this directory (shared by the workers that share the file system), each object encrypted with --codec-key's keys when given "+defaultNote,
		"keep the sandbox workspaces' snapshots in PostgreSQL")
}

// open opens the store the flags pick, its objects sealed with keys when not nil; ok is false
// when the flags pick none. Close the Closer when done.
func (f *sandboxStoreFlags) open(ctx context.Context, keys codec.KeySource) (store sandbox.Store, closer io.Closer, ok bool, err error) {
	dsn, err := f.postgresDSN()
	if err != nil {
		return sandbox.Store{}, nil, false, err
	}
	if dsn != "" {
		db, err := f.openDB(dsn)
		if err != nil {
			return sandbox.Store{}, nil, false, err
		}
		store, err := sandbox.SQLStore(ctx, db, keys)
		if err != nil {
			db.Close()
			return sandbox.Store{}, nil, false, fmt.Errorf("sandbox store: %w", err)
		}
		return store, db, true, nil
	}
	dir, closer, err := f.directory("toolgate-sandbox-store-")
	if err != nil || dir == "" {
		return sandbox.Store{}, closer, false, err
	}
	return sandbox.FileStore(dir, keys), closer, true, nil
}

// sandboxFlags configure a worker's sandbox tools (exec, the workspace file tools, named
// commands).
type sandboxFlags struct {
	store      sandboxStoreFlags
	dir        string
	readOnly   []string
	retention  time.Duration
	env        []string
	allowHosts []string
	commands   []string // NAME=LINE
	idempotent []string // NAME=LINE
	noExec     bool
	wall       time.Duration
	memoryMiB  int64
	maxMiB     int64
	processes  int
	cpus       float64
	// enable is dev's --sandbox. Dev keeps the local copies in a temporary directory (TempWork:
	// its data directory is private to its user, and the sandbox's user must reach them; the
	// store has the workspaces) and sets store.DefaultDir under its data directory, or InMemory.
	enable   bool
	TempWork bool
	InMemory bool
}

// addSandboxFlags adds the sandbox flags to a worker (dev: also --sandbox).
func addSandboxFlags(cmd *cobra.Command, a *app, f *sandboxFlags, dev bool) {
	fs := cmd.Flags()
	if dev {
		fs.BoolVar(&f.enable, "sandbox", false, "serve the sandbox tools (exec, workspace_read_file, workspace_list_dir, workspace_write_file) with the workspaces under <data-dir>/sandbox (needs bubblewrap: make setup)")
		addSandboxStoreFlags(cmd, a, &f.store, "(default <data-dir>/sandbox/store; a temporary directory with --in-memory)")
	} else {
		addSandboxStoreFlags(cmd, a, &f.store, "(required with --sandbox-dir, unless --sandbox-store-postgres-file)")
	}
	fs.StringVar(&f.dir, "sandbox-dir", "", "serve the sandbox tools (exec, workspace_read_file, workspace_list_dir, workspace_write_file), keeping the local copies of the workspaces in this directory (needs bubblewrap: make setup)")
	fs.StringArrayVar(&f.readOnly, "sandbox-ro", nil, "bind this host path read-only at the same path inside the sandbox, its bin directory first in PATH, such as /usr/local/go (repeat; /usr is bound already)")
	fs.DurationVar(&f.retention, "sandbox-retention", sandbox.DefaultRetention, "remove a workspace (snapshots and local copies) no call committed for this long; the worker sweeps every hour")
	fs.StringArrayVar(&f.env, "sandbox-env", nil, "a variable exec's env argument may set, such as GOFLAGS (repeat; default none: commands get only HOME, PATH and TMPDIR)")
	fs.StringArrayVar(&f.allowHosts, "sandbox-allow-host", nil, "a host name (name or name:port; ports 80 and 443 by default) commands may reach over HTTP(S) through the sandbox's proxy, on public addresses only, such as proxy.golang.org (repeat; default none: no network at all). Needs a worker running as root; exec is then not run again after a lost worker")
	fs.StringArrayVar(&f.commands, "sandbox-command", nil, "NAME=LINE: a tool NAME that runs the shell line LINE in the workspace, unsafe like exec (repeat)")
	fs.StringArrayVar(&f.idempotent, "sandbox-idempotent-command", nil, "NAME=LINE: a tool NAME that runs LINE, declared idempotent (retried after a lost worker), such as 'run_tests=go test ./...' (repeat)")
	fs.BoolVar(&f.noExec, "sandbox-no-exec", false, "leave exec out: models run only the --sandbox-command tools")
	fs.DurationVar(&f.wall, "sandbox-wall", sandbox.DefaultLimits.Wall, "how long one command may run before its process tree is killed")
	fs.Int64Var(&f.memoryMiB, "sandbox-memory-mib", sandbox.DefaultLimits.Memory>>20, "memory of a sandbox's processes together (per-sandbox limits), and address space of each, in MiB")
	fs.Int64Var(&f.maxMiB, "sandbox-workspace-mib", sandbox.DefaultLimits.Workspace>>20, "how large a workspace may grow, in MiB")
	fs.IntVar(&f.processes, "sandbox-processes", sandbox.DefaultLimits.Processes, "how many processes a command may run at once")
	fs.Float64Var(&f.cpus, "sandbox-cpus", sandbox.DefaultLimits.CPUs, "how many CPUs a command's processes may use together (per-sandbox limits with the cpu controller)")
}

// enabled reports whether the flags ask for the sandbox tools.
func (f *sandboxFlags) enabled() bool { return f.dir != "" || f.enable }

// limits are the limits the flags set.
func (f *sandboxFlags) limits() (sandbox.Limits, error) {
	switch {
	case f.wall <= 0:
		return sandbox.Limits{}, badInput(fmt.Errorf("--sandbox-wall %s: want a positive duration", f.wall))
	case f.memoryMiB <= 0 || f.memoryMiB > 1<<20:
		return sandbox.Limits{}, badInput(fmt.Errorf("--sandbox-memory-mib %d: want 1 to %d", f.memoryMiB, 1<<20))
	case f.maxMiB <= 0 || f.maxMiB > 1<<20:
		return sandbox.Limits{}, badInput(fmt.Errorf("--sandbox-workspace-mib %d: want 1 to %d", f.maxMiB, 1<<20))
	case f.processes <= 0:
		return sandbox.Limits{}, badInput(fmt.Errorf("--sandbox-processes %d: want a positive number", f.processes))
	case !(f.cpus >= 0.01 && f.cpus <= 1024): // NaN too
		return sandbox.Limits{}, badInput(fmt.Errorf("--sandbox-cpus %g: want 0.01 to 1024", f.cpus))
	case f.retention <= 0:
		return sandbox.Limits{}, badInput(fmt.Errorf("--sandbox-retention %s: want a positive duration", f.retention))
	}
	return sandbox.Limits{Wall: f.wall, Memory: f.memoryMiB << 20, Workspace: f.maxMiB << 20, Processes: f.processes, CPUs: f.cpus}, nil
}

// namedCommands parses --sandbox-command and --sandbox-idempotent-command.
func (f *sandboxFlags) namedCommands() ([]toolbox.SandboxCommand, error) {
	var out []toolbox.SandboxCommand
	for _, set := range []struct {
		flag       string
		specs      []string
		idempotent bool
	}{{"--sandbox-command", f.commands, false}, {"--sandbox-idempotent-command", f.idempotent, true}} {
		for _, spec := range set.specs {
			name, line, ok := strings.Cut(spec, "=")
			if !ok || name == "" || strings.TrimSpace(line) == "" {
				return nil, badInput(fmt.Errorf("%s %q: want NAME=LINE", set.flag, spec))
			}
			out = append(out, toolbox.SandboxCommand{Name: name, Shell: line, Idempotent: set.idempotent})
		}
	}
	return out, nil
}

// check refuses flags that cannot make a sandbox, before anything is dialed or started.
func (f *sandboxFlags) check() error {
	if !f.enabled() {
		return nil
	}
	if _, err := f.limits(); err != nil {
		return err
	}
	if _, err := f.namedCommands(); err != nil {
		return err
	}
	if len(f.allowHosts) > 0 && os.Geteuid() != 0 {
		return badInput(errors.New("--sandbox-allow-host needs a worker running as root: the proxy listens in the sandbox's network namespace"))
	}
	dsn, err := f.store.postgresDSN()
	if err != nil {
		return err
	}
	if dsn == "" && f.store.dir == "" && f.store.DefaultDir == "" && !f.InMemory {
		return badInput(errors.New("--sandbox-dir needs a store the workers share: --sandbox-store DIR or --sandbox-store-postgres-file FILE"))
	}
	return nil
}

// workerSandbox is a worker's running sandbox: its workspaces and the sweeper that removes
// those past retention.
type workerSandbox struct {
	cfg     *toolbox.Sandbox
	closers []io.Closer
	stop    context.CancelFunc
	swept   sync.WaitGroup
}

// Close stops the sweeper and closes the store.
func (s *workerSandbox) Close() error {
	if s == nil {
		return nil
	}
	if s.stop != nil {
		s.stop()
	}
	s.swept.Wait()
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i].Close())
	}
	return errors.Join(errs...)
}

// open starts the sandbox the flags describe: the runner (bubblewrap must work here), the
// store, the workspaces and their sweeper; nil when the flags enable none. parts says the worker
// keeps result parts (the commands' whole output is attached then). Close it when done.
func (f *sandboxFlags) open(ctx context.Context, logger *zap.Logger, keys codec.KeySource, parts bool) (*workerSandbox, error) {
	if !f.enabled() {
		return nil, nil
	}
	limits, err := f.limits()
	if err != nil {
		return nil, err
	}
	commands, err := f.namedCommands()
	if err != nil {
		return nil, err
	}
	rc := sandbox.RunnerConfig{ReadOnly: f.readOnly, Limits: limits}
	if len(f.allowHosts) > 0 {
		// The proxy dials as http_get does: public addresses only, exactly those checked.
		if rc.Dial, err = toolbox.PublicDialer(toolbox.Config{Logger: logger}); err != nil {
			return nil, err
		}
	}
	runner, err := sandbox.NewRunner(rc)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if ok, why := runner.PerSandboxLimits(); ok {
		logger.Info("sandbox processes and memory are limited per sandbox (control groups)")
	} else {
		logger.Warn("sandbox processes and memory are limited per process and host user (rlimits), not per sandbox", zap.String("why", why))
	}
	s := &workerSandbox{}
	dir := f.dir
	if dir == "" && (f.TempWork || f.InMemory) {
		tmp, err := os.MkdirTemp("", "toolgate-sandbox-")
		if err == nil {
			s.closers = append(s.closers, closerFunc(func() error { return os.RemoveAll(tmp) }))
			err = os.Chmod(tmp, 0o711) // the sandbox's user reaches its workspace, lists nothing
		}
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		dir = filepath.Join(tmp, "work")
		if f.InMemory && f.store.DefaultDir == "" {
			f.store.DefaultDir = filepath.Join(tmp, "store")
		}
	}
	store, storeCloser, ok, err := f.store.open(ctx, keys)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	s.closers = append(s.closers, storeCloser)
	if !ok {
		_ = s.Close()
		return nil, badInput(errors.New("--sandbox-dir needs a store the workers share: --sandbox-store DIR or --sandbox-store-postgres-file FILE"))
	}
	owner := &sandbox.Owner{UID: runner.UID(), GID: runner.GID()}
	ws, err := sandbox.NewWorkspaces(sandbox.Config{Dir: dir, Store: store, Runner: runner, Retention: f.retention, MaxBytes: limits.Workspace, Owner: owner})
	if errors.Is(err, sandbox.ErrDirUnreachable) {
		_ = s.Close()
		return nil, badInput(fmt.Errorf("--sandbox-dir: %w", err))
	}
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s.cfg = &toolbox.Sandbox{Workspaces: ws, Runner: runner, Env: f.env, AllowHosts: f.allowHosts, Keys: keys, Limits: limits, Parts: parts, Commands: commands, DisableExec: f.noExec, Owner: owner}
	sweepCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	s.swept.Add(1)
	go func() {
		defer s.swept.Done()
		runSandboxSweeper(sweepCtx, ws, logger, sandboxSweepEvery)
	}()
	return s, nil
}

// register adds the sandbox tools to reg.
func (s *workerSandbox) register(reg *toolcore.Registry, logger *zap.Logger) error {
	if s == nil {
		return nil
	}
	tools, err := toolbox.SandboxTools(toolbox.Config{Sandbox: s.cfg, Logger: logger})
	if err != nil {
		return badInput(fmt.Errorf("sandbox tools: %w", err))
	}
	if err := reg.RegisterMany(tools...); err != nil {
		return badInput(fmt.Errorf("sandbox tools: %w", err))
	}
	return nil
}

// runSandboxSweeper removes the workspaces past retention at once and every interval until ctx
// ends, logging what it removed and its failures.
func runSandboxSweeper(ctx context.Context, ws *sandbox.Workspaces, logger *zap.Logger, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		n, err := ws.Sweep(ctx, time.Now())
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			logger.Warn("sandbox sweep failed; it runs again in an hour", zap.Error(err))
		case n > 0:
			logger.Info("sandbox workspaces past retention removed", zap.Int("removed", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// devSandboxDir is toolgate dev's sandbox directory under its data directory: local copies in
// work/, the store in store/.
func devSandboxDir(dataDir string) string { return filepath.Join(dataDir, "sandbox") }

// The sandbox command.

type sandboxAdminOptions struct {
	store    sandboxStoreFlags
	codecKey string
	json     bool
}

func newSandboxCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "List, show or remove the sandbox workspaces the workers keep",
		Long: `Manage the workspaces of the sandbox tools (exec and the workspace file tools): one per
agent run, kept in the store the workers share (--sandbox-store or --sandbox-store-postgres-file;
default toolgate dev's, <data-dir>/sandbox/store). A worker removes the workspaces no call
committed for --sandbox-retention (7 days) by itself.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_ = cmd.Help()
			return badInput(errors.New("missing subcommand"))
		},
	}
	cmd.AddCommand(newSandboxListCommand(a), newSandboxShowCommand(a), newSandboxRemoveCommand(a))
	return cmd
}

// addSandboxAdminFlags adds the store and key flags of the sandbox subcommands.
func addSandboxAdminFlags(cmd *cobra.Command, a *app, o *sandboxAdminOptions, withKey, withJSON bool) {
	addSandboxStoreFlags(cmd, a, &o.store, "(default toolgate dev's, <data-dir>/sandbox/store)")
	o.store.DefaultDir = filepath.Join(devSandboxDir(readerDataDir(a.lookupEnv)), "store")
	o.store.OnlyExisting = true
	if withKey {
		addCodecKeyFlag(cmd, &o.codecKey)
	}
	if withJSON {
		cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	}
}

// readerDataDir is toolgate dev's data directory as readers find it: $TOOLGATE_DATA_DIR, else
// the default.
func readerDataDir(lookupEnv func(string) (string, bool)) string {
	if dir, ok := lookupEnv("TOOLGATE_DATA_DIR"); ok && dir != "" {
		return dir
	}
	return defaultDataDir(lookupEnv)
}

// openWorkspaces opens the store of o as a Workspaces with a temporary local directory (the
// commands keep no local copies), removed by the returned func.
func openWorkspaces(ctx context.Context, o sandboxAdminOptions) (*sandbox.Workspaces, func(), error) {
	keyring, err := loadKeyring(o.codecKey)
	if err != nil {
		return nil, nil, err
	}
	var keys codec.KeySource
	if keyring != nil {
		keys = keyring
	}
	store, closer, ok, err := o.store.open(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, badInput(errors.New("no sandbox store: give --sandbox-store DIR or --sandbox-store-postgres-file FILE (toolgate dev's is <data-dir>/sandbox/store, made by dev --sandbox)"))
	}
	tmp, err := os.MkdirTemp("", "toolgate-sandbox-admin-")
	if err != nil {
		closer.Close()
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	done := func() {
		_ = os.RemoveAll(tmp)
		_ = closer.Close()
	}
	ws, err := sandbox.NewWorkspaces(sandbox.Config{Dir: filepath.Join(tmp, "work"), Store: store})
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	return ws, done, nil
}

// sandboxHeadJSON is one workspace of sandbox list --json and show --json.
type sandboxHeadJSON struct {
	Workspace string    `json:"workspace"`
	Version   int64     `json:"version"`
	Files     int64     `json:"files"`
	Bytes     int64     `json:"bytes"`
	Updated   time.Time `json:"updated"`
	// Call is the idempotency key (workflow ID) of the call that committed the last snapshot.
	Call     string `json:"call,omitempty"`
	Manifest string `json:"manifest"`
}

func headJSON(h sandbox.Head) sandboxHeadJSON {
	return sandboxHeadJSON{Workspace: h.Workspace, Version: h.Version, Files: h.Files, Bytes: h.Bytes, Updated: h.Updated.UTC(), Call: h.Call, Manifest: h.Manifest}
}

func newSandboxListCommand(a *app) *cobra.Command {
	var o sandboxAdminOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workspaces: name, version, files, bytes, last commit",
		Long: `List every workspace of the sandbox store, sorted by name, one tab-separated line each:

  workspace (the agent run)  version  files  bytes  updated (RFC 3339)  call (the last commit's)

or a JSON array with --json. Names and calls are escaped for the terminal.

Exit codes: 0 listed (also when there is none), 2 bad flags or no store, 5 failure.`,
		Example: `  toolgate sandbox list
  toolgate sandbox list --sandbox-store /srv/toolgate/sandbox-store --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSandboxList(cmd.Context(), a, o) },
	}
	addSandboxAdminFlags(cmd, a, &o, false, true)
	return cmd
}

func runSandboxList(ctx context.Context, a *app, o sandboxAdminOptions) error {
	ws, done, err := openWorkspaces(ctx, o)
	if err != nil {
		return err
	}
	defer done()
	heads, err := ws.List(ctx)
	if err != nil {
		return fmt.Errorf("list workspaces: %w", err)
	}
	out := make([]sandboxHeadJSON, len(heads))
	for i, h := range heads {
		out[i] = headJSON(h)
	}
	if o.json {
		return writeJSON(a.out, out)
	}
	total := 0
	for _, h := range out {
		name, n := safetext.Escape(h.Workspace)
		call, m := safetext.Escape(dash(h.Call))
		total += n + m
		if _, err := fmt.Fprintf(a.out, "%s\t%d\t%d\t%d\t%s\t%s\n", name, h.Version, h.Files, h.Bytes, h.Updated.Format(time.RFC3339), call); err != nil {
			return err
		}
	}
	if total > 0 {
		_, err := fmt.Fprintf(a.out, "note\t%s\n", safetext.Note(total))
		return err
	}
	return nil
}

// dash is s, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sandboxShowJSON is sandbox show --json.
type sandboxShowJSON struct {
	sandboxHeadJSON
	Entries []sandboxEntryJSON `json:"entries"`
}

// sandboxEntryJSON is one file of a workspace's snapshot.
type sandboxEntryJSON struct {
	Path   string `json:"path"`
	Mode   string `json:"mode"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Link   string `json:"link,omitempty"`
}

func newSandboxShowCommand(a *app) *cobra.Command {
	var o sandboxAdminOptions
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a workspace: its head and the files of its last snapshot",
		Long: `Show one workspace (NAME: its agent run, as sandbox list prints it): the "key value" lines of
its head (workspace, version, files, bytes, updated, call, manifest), then one tab-separated line
per entry of its last snapshot: mode, size, path (and " -> target" for a symbolic link). With
--json, one object with the head's fields and "entries". Snapshots sealed with a codec key need
it (--codec-key). Names, paths and link targets are escaped for the terminal.

Exit codes: 0 shown, 2 bad flags, no store or no such workspace, 5 failure.`,
		Example: `  toolgate sandbox show agent-7f3a
  toolgate sandbox show agent-7f3a --codec-key keys.txt --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSandboxShow(cmd.Context(), a, o, args[0]) },
	}
	addSandboxAdminFlags(cmd, a, &o, true, true)
	return cmd
}

func runSandboxShow(ctx context.Context, a *app, o sandboxAdminOptions, name string) error {
	ws, done, err := openWorkspaces(ctx, o)
	if err != nil {
		return err
	}
	defer done()
	head, entries, err := ws.Show(ctx, name)
	if errors.Is(err, sandbox.ErrNoWorkspace) {
		return badInput(fmt.Errorf("no workspace %s in the store", safetext.String(name)))
	}
	if err != nil {
		return fmt.Errorf("show workspace: %w", err)
	}
	out := sandboxShowJSON{sandboxHeadJSON: headJSON(head), Entries: make([]sandboxEntryJSON, len(entries))}
	for i, e := range entries {
		out.Entries[i] = sandboxEntryJSON{Path: e.Path, Mode: fs32Mode(e.Mode), Size: e.Size, SHA256: e.SHA256, Link: e.Link}
	}
	if o.json {
		return writeJSON(a.out, out)
	}
	h := out.sandboxHeadJSON
	if err := writeLines(a.out, [][2]string{
		{"workspace", h.Workspace}, {"version", fmt.Sprint(h.Version)}, {"files", fmt.Sprint(h.Files)}, {"bytes", fmt.Sprint(h.Bytes)},
		{"updated", h.Updated.Format(time.RFC3339)}, {"call", dash(h.Call)}, {"manifest", h.Manifest},
	}); err != nil {
		return err
	}
	total := 0
	for _, e := range out.Entries {
		p, n := safetext.Escape(e.Path)
		total += n
		if e.Link != "" {
			l, m := safetext.Escape(e.Link)
			total += m
			p += " -> " + l
		}
		if _, err := fmt.Fprintf(a.out, "%s\t%d\t%s\n", e.Mode, e.Size, p); err != nil {
			return err
		}
	}
	if total > 0 {
		_, err := fmt.Fprintf(a.out, "note\t%s\n", safetext.Note(total))
		return err
	}
	return nil
}

// fs32Mode writes a manifest entry's mode as ls does (drwxr-xr-x).
func fs32Mode(m uint32) string { return os.FileMode(m).String() }

func newSandboxRemoveCommand(a *app) *cobra.Command {
	var o sandboxAdminOptions
	cmd := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a workspace: its head and its snapshots' objects",
		Long: `Remove one workspace from the sandbox store: its head and the objects of its snapshots (the
files, sealed with a codec key, need it: --codec-key). A later call of its agent run starts with
an empty workspace. Workers' local copies are left to their own sweep (a worker restores a
copy only to a head the store has). It prints "removed NAME"; removing a workspace that does
not exist is no error.

Exit codes: 0 removed, 2 bad flags or no store, 5 failure.`,
		Example: `  toolgate sandbox rm agent-7f3a
  toolgate sandbox rm agent-7f3a --sandbox-store-postgres-file /run/secrets/sandbox-dsn --codec-key keys.txt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSandboxRemove(cmd.Context(), a, o, args[0]) },
	}
	addSandboxAdminFlags(cmd, a, &o, true, false)
	return cmd
}

func runSandboxRemove(ctx context.Context, a *app, o sandboxAdminOptions, name string) error {
	ws, done, err := openWorkspaces(ctx, o)
	if err != nil {
		return err
	}
	defer done()
	if err := ws.Remove(ctx, name); err != nil {
		return fmt.Errorf("remove workspace: %w", err)
	}
	_, err = fmt.Fprintf(a.out, "removed %s\n", safetext.String(name))
	return err
}
