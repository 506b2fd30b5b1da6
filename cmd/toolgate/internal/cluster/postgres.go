package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/pgstore"
	"github.com/toolgate/toolgate/internal/testbin"
)

// PostgresBinDir is where Debian's postgresql-15 package puts initdb and postgres.
const PostgresBinDir = "/usr/lib/postgresql/15/bin"

// postgresUser owns the data directory and runs the server when the harness runs as root.
const postgresUser = "postgres"

// postgresStopTimeout bounds a fast shutdown before the server is killed.
const postgresStopTimeout = 10 * time.Second

// Postgres is a private PostgreSQL server on a loopback port, trusting local connections by the
// superuser `postgres` without a password.
type Postgres struct {
	dir  string // removed by Stop
	data string // the data directory, inside dir
	cred *syscall.Credential
	port int
	cmd  *exec.Cmd
	done chan struct{}      // closed when the server process has exited
	log  testbin.SyncBuffer // the server's stderr
}

// StartPostgres initdbs a new cluster in a fresh temporary directory and starts it on a free
// loopback port; it returns once pg_isready says the server accepts connections. The error names
// `make setup` when PostgreSQL is missing.
func StartPostgres(ctx context.Context) (*Postgres, error) {
	initdb := filepath.Join(PostgresBinDir, "initdb")
	if _, err := os.Stat(initdb); err != nil {
		return nil, fmt.Errorf("PostgreSQL 15 is missing (%w): run `make setup`", err)
	}
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	// Directly under the system temp dir (mode 1777): the postgres user must reach it.
	dir, err := os.MkdirTemp("", "toolgate-pg-")
	if err != nil {
		return nil, fmt.Errorf("postgres dir: %w", err)
	}
	pg := &Postgres{dir: dir, data: filepath.Join(dir, "data"), cred: cred}
	fail := func(err error) (*Postgres, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("chown postgres dir: %w", err))
		}
	}
	cmd := exec.CommandContext(ctx, initdb, "-D", pg.data, "-U", postgresUser, "--auth=trust", "-E", "UTF8", "--no-sync")
	cmd.SysProcAttr = childAttr(cred)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w\n%s", err, out))
	}
	// A picked port can be taken before postgres binds it; postgres then exits and is started
	// again on another port.
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err == nil {
			err = pg.start(ctx, port)
		}
		if err == nil {
			return pg, nil
		}
		if attempt == postgresStartAttempts || ctx.Err() != nil {
			return nil, errors.Join(err, pg.Stop())
		}
	}
}

// postgresStartAttempts bounds the starts on a newly picked port.
const postgresStartAttempts = 3

// start starts postgres on its data directory and port and waits until it accepts connections;
// on error the process has exited.
func (pg *Postgres) start(ctx context.Context, port int) error {
	pg.port = port
	pg.done = make(chan struct{})
	pg.log = testbin.SyncBuffer{}
	pg.cmd = exec.Command(filepath.Join(PostgresBinDir, "postgres"),
		"-D", pg.data,
		"-p", strconv.Itoa(pg.port),
		"-k", pg.dir, // the Unix socket stays in the private directory
		"-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=300",
		// A test database: a machine crash loses it anyway, so neither fsync nor full-page
		// writes (both guard only against an operating-system crash). synchronous_commit stays
		// on: with it off, a commit is acknowledged before its WAL leaves PostgreSQL's shared
		// memory, and the immediate shutdown of Restart (a server crash) drops the commits of
		// the last 3 x wal_writer_delay (600 ms). Temporal's history service keeps serving the
		// acknowledged state from its cache while the database went back, so a workflow that
		// completed in that window stays running in the database and in visibility (issue 26).
		"-c", "fsync=off",
		"-c", "full_page_writes=off",
	)
	pg.cmd.SysProcAttr = childAttr(pg.cred)
	pg.cmd.Stderr = &pg.log
	if err := pg.cmd.Start(); err != nil {
		close(pg.done)
		return fmt.Errorf("start postgres: %w", err)
	}
	cmd, done := pg.cmd, pg.done
	go func() { _ = cmd.Wait(); close(done) }()
	if err := pg.waitAccepting(ctx); err != nil {
		pg.kill()
		return err
	}
	return nil
}

// postgresCredential is the postgres user's credential when the harness runs as root, nil else
// (PostgreSQL then runs as the current user, which it accepts).
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(postgresUser)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL refuses root and user %q is missing (%w): run `make setup`", postgresUser, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("uid of %q: %w", postgresUser, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("gid of %q: %w", postgresUser, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// waitAccepting polls pg_isready until the server accepts connections (a TCP accept alone can
// be another process on a port taken meanwhile, or a server still starting up), or exits.
func (pg *Postgres) waitAccepting(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return poll(ctx, func(ctx context.Context) error {
		select {
		case <-pg.done:
			return errStop{fmt.Errorf("postgres exited while starting:\n%s", testbin.Tail(pg.log.String(), logTail))}
		default:
		}
		out, err := exec.CommandContext(ctx, filepath.Join(PostgresBinDir, "pg_isready"),
			"-h", loopback, "-p", strconv.Itoa(pg.port), "-U", postgresUser, "-d", "postgres", "-t", "2").CombinedOutput()
		if err != nil {
			return fmt.Errorf("pg_isready: %w: %s", err, out)
		}
		return nil
	})
}

// Address is the server's "127.0.0.1:port".
func (pg *Postgres) Address() string {
	return hostPort(pg.port)
}

// EnableTLS gives the server certPEM and keyPEM (PEM: a certificate and its private key) as its
// TLS certificate, turns ssl on and reloads its configuration; it returns once a connection with
// sslmode=require succeeds. Connections without TLS stay allowed, as in a stock pg_hba.conf.
func (pg *Postgres) EnableTLS(ctx context.Context, certPEM, keyPEM []byte) error {
	for _, f := range []struct {
		name string
		data []byte
	}{{"server.crt", certPEM}, {"server.key", keyPEM}} {
		path := filepath.Join(pg.data, f.name)
		// PostgreSQL refuses a key file others can read, or one its user does not own.
		if err := os.WriteFile(path, f.data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
		if pg.cred != nil {
			if err := os.Chown(path, int(pg.cred.Uid), int(pg.cred.Gid)); err != nil {
				return fmt.Errorf("chown %s: %w", f.name, err)
			}
		}
	}
	conf, err := os.OpenFile(filepath.Join(pg.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open postgresql.conf: %w", err)
	}
	_, err = conf.WriteString("\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n")
	if cerr := conf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write postgresql.conf: %w", err)
	}
	if err := pg.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return fmt.Errorf("reload postgres: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	stores, err := pgstore.ParseURL(fmt.Sprintf("postgres://%s@%s/postgres?sslmode=require", postgresUser, pg.Address()))
	if err != nil {
		return err
	}
	return poll(ctx, func(ctx context.Context) error { return pgstore.Ping(ctx, stores) })
}

// Restart stops the server in immediate mode (SIGQUIT: no shutdown checkpoint, crash recovery at
// the next start, what a crash of the server leaves behind) and starts it again on the same data
// directory and port; it returns once the server accepts connections again.
func (pg *Postgres) Restart(ctx context.Context) error {
	_ = pg.cmd.Process.Signal(syscall.SIGQUIT)
	t := time.NewTimer(postgresStopTimeout)
	defer t.Stop()
	select {
	case <-pg.done:
	case <-t.C:
		pg.kill()
	}
	return pg.start(ctx, pg.port)
}

// Stop shuts the server down (fast shutdown, then SIGKILL after a timeout) and removes its
// directory. It is safe to call once.
func (pg *Postgres) Stop() error {
	if pg.cmd != nil && pg.cmd.Process != nil {
		_ = pg.cmd.Process.Signal(syscall.SIGINT)
		t := time.NewTimer(postgresStopTimeout)
		defer t.Stop()
		select {
		case <-pg.done:
		case <-t.C:
			pg.kill()
		}
	}
	return os.RemoveAll(pg.dir)
}

// kill sends SIGKILL to the server process and waits until it has exited.
func (pg *Postgres) kill() {
	_ = pg.cmd.Process.Kill()
	<-pg.done
}
