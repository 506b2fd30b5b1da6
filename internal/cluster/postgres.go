package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
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
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the server process has exited
	log  bytes.Buffer  // the server's stderr; read only after done
}

// StartPostgres initdbs a new cluster in a fresh temporary directory and starts it on a free
// loopback port; it returns once the server accepts TCP connections. The error names
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
	pg := &Postgres{dir: dir, done: make(chan struct{})}
	fail := func(err error) (*Postgres, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("chown postgres dir: %w", err))
		}
	}
	data := filepath.Join(dir, "data")
	cmd := exec.CommandContext(ctx, initdb, "-D", data, "-U", postgresUser, "--auth=trust", "-E", "UTF8", "--no-sync")
	cmd.SysProcAttr = childAttr(cred)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w\n%s", err, out))
	}
	if pg.port, err = freePort(); err != nil {
		return fail(err)
	}
	pg.cmd = exec.Command(filepath.Join(PostgresBinDir, "postgres"),
		"-D", data,
		"-p", strconv.Itoa(pg.port),
		"-k", dir, // the Unix socket stays in the private directory
		"-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=300",
		"-c", "fsync=off", // a test database: a machine crash loses it anyway
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
	)
	pg.cmd.SysProcAttr = childAttr(cred)
	pg.cmd.Stderr = &pg.log
	if err := pg.cmd.Start(); err != nil {
		return fail(fmt.Errorf("start postgres: %w", err))
	}
	go func() { _ = pg.cmd.Wait(); close(pg.done) }()
	if err := pg.waitAccepting(ctx); err != nil {
		return nil, errors.Join(err, pg.Stop())
	}
	return pg, nil
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

// waitAccepting polls the TCP port until the server accepts a connection or exits.
func (pg *Postgres) waitAccepting(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return poll(ctx, func(ctx context.Context) error {
		select {
		case <-pg.done:
			return errStop{fmt.Errorf("postgres exited while starting:\n%s", pg.log.String())}
		default:
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", pg.Address())
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// Address is the server's "127.0.0.1:port".
func (pg *Postgres) Address() string {
	return hostPort(pg.port)
}

// Stop shuts the server down (fast shutdown, then SIGKILL after a timeout) and removes its
// directory. It is safe to call once.
func (pg *Postgres) Stop() error {
	_ = pg.cmd.Process.Signal(syscall.SIGINT)
	t := time.NewTimer(postgresStopTimeout)
	defer t.Stop()
	select {
	case <-pg.done:
	case <-t.C:
		_ = pg.cmd.Process.Kill()
		<-pg.done
	}
	return os.RemoveAll(pg.dir)
}
