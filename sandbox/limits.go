package sandbox

import "time"

// Limits bound one command of a sandbox. A zero field takes its default (DefaultLimits).
type Limits struct {
	// Wall is how long the command may run before its process tree is killed. Default 2 min;
	// the tool's own Timeout bounds it too.
	Wall time.Duration `json:"wall,omitempty"`
	// CPU is the CPU time of each process (RLIMIT_CPU). Default 60 s.
	CPU time.Duration `json:"cpu,omitempty"`
	// CPUs is how many CPUs the sandbox's processes may use together (a CFS quota of CPUs per
	// scheduling period), with per-sandbox limits on a host whose cpu controller is mounted:
	// a command never takes the CPUs the worker needs for its heartbeats, nor all of those of
	// the sandboxes beside it. Default 1.
	CPUs float64 `json:"cpus,omitempty"`
	// Memory is the address space of each process (RLIMIT_AS), in bytes, and, with per-sandbox
	// limits (Runner.PerSandboxLimits), the memory of all the sandbox's processes together, its
	// tmpfs pages included: beyond it the kernel kills a process (Output.Limit "memory").
	// Default 1 GiB.
	Memory int64 `json:"memory,omitempty"`
	// Processes is how many processes (threads included) the sandbox may run. Default 128. With
	// per-sandbox limits its own control group counts them (pids.max); without, RLIMIT_NPROC
	// counts every process of the host user: concurrent sandboxes of one worker share the
	// count, and a worker that is not root (its sandboxes run as itself) gets the limit on top
	// of the processes it already runs.
	Processes int `json:"processes,omitempty"`
	// OpenFiles is how many files each process may hold open (RLIMIT_NOFILE). Default 256.
	OpenFiles int `json:"openFiles,omitempty"`
	// FileSize is the largest file a process may write (RLIMIT_FSIZE), in bytes. Default 64 MiB.
	FileSize int64 `json:"fileSize,omitempty"`
	// Output is how many bytes of stdout and of stderr each are kept (the tail). Default 64 KiB;
	// at most 16 MiB.
	Output int `json:"output,omitempty"`
	// Workspace is how many bytes the workspace may hold; a command that grows it beyond is
	// killed and its changes discarded. Default 512 MiB.
	Workspace int64 `json:"workspace,omitempty"`
	// Tmp is the size of the sandbox's own /tmp, and of its /dev/shm (each a tmpfs, discarded
	// after the command), in bytes. Default 64 MiB.
	Tmp int64 `json:"tmp,omitempty"`
}

// DefaultLimits are the limits a zero Limits field takes.
var DefaultLimits = Limits{
	Wall:      2 * time.Minute,
	CPU:       60 * time.Second,
	CPUs:      1,
	Memory:    1 << 30,
	Processes: 128,
	OpenFiles: 256,
	FileSize:  64 << 20,
	Output:    64 << 10,
	Workspace: 512 << 20,
	Tmp:       64 << 20,
}

// WithDefaults returns l with every zero field set from DefaultLimits.
func (l Limits) WithDefaults() Limits { return l.Over(DefaultLimits) }

// Over returns l with every zero field taken from base: a command's own limits over its
// runner's.
func (l Limits) Over(base Limits) Limits {
	orBase(&l.Wall, base.Wall)
	orBase(&l.CPU, base.CPU)
	orBase(&l.CPUs, base.CPUs)
	orBase(&l.Memory, base.Memory)
	orBase(&l.Processes, base.Processes)
	orBase(&l.OpenFiles, base.OpenFiles)
	orBase(&l.FileSize, base.FileSize)
	orBase(&l.Output, base.Output)
	orBase(&l.Workspace, base.Workspace)
	orBase(&l.Tmp, base.Tmp)
	return l
}

// orBase sets *v to base when *v is not positive (unset).
func orBase[T int | int64 | float64 | time.Duration](v *T, base T) {
	if *v <= 0 {
		*v = base
	}
}
