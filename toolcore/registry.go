package toolcore

import (
	"slices"
	"sync"
)

// Registry holds immutable tools by name. It is safe for concurrent use. The zero value is an
// empty registry ready for use; a nil *Registry reads as empty (Get, Names, Len, Snapshot).
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
}

// NewRegistry returns a registry holding tools, registered as one batch (see RegisterMany).
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{}
	if err := r.RegisterMany(tools...); err != nil {
		return nil, err
	}
	return r, nil
}

// Register adds one tool (a batch of one).
func (r *Registry) Register(t Tool) error { return r.RegisterMany(t) }

// RegisterMany adds a batch atomically: the whole batch is checked first (zero Tools are
// CodeInvalidToolBatch, duplicates inside the batch or against the registry CodeDuplicateToolName)
// and the registry is changed once, or not at all.
func (r *Registry) RegisterMany(tools ...Tool) error {
	// Phase 1: snapshot and check the batch without the lock. Tools are immutable, so copying the
	// slice is a complete snapshot: later changes to the caller's slice change nothing.
	batch := slices.Clone(tools)
	index := make(map[string]int, len(batch))
	for i, t := range batch {
		if t.IsZero() {
			return contractErrorf(CodeInvalidToolBatch, "batch entry %d is the zero Tool (use Define)", i)
		}
		if j, dup := index[t.Name()]; dup {
			return contractErrorf(CodeDuplicateToolName, "tool %q appears twice in the batch (entries %d and %d)", t.Name(), j, i)
		}
		index[t.Name()] = i
	}
	// Phase 2: check against the registry and mutate once, under one lock.
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range batch {
		if _, dup := r.tools[t.Name()]; dup {
			return contractErrorf(CodeDuplicateToolName, "tool %q is already registered", t.Name())
		}
	}
	if r.tools == nil {
		r.tools = make(map[string]Tool, len(batch))
	}
	for _, t := range batch {
		r.tools[t.Name()] = t
	}
	return nil
}

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	if r == nil {
		return Tool{}, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names returns a fresh sorted copy of the registered names.
func (r *Registry) Names() []string {
	if r == nil {
		return []string{}
	}
	r.mu.RLock()
	names := make([]string, 0, len(r.tools))
	for name := range r.tools {
		names = append(names, name)
	}
	r.mu.RUnlock()
	slices.Sort(names)
	return names
}

// Len returns the number of registered tools.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// Snapshot returns an independent registry sharing the immutable tools: later registrations on
// either side do not show on the other.
func (r *Registry) Snapshot() *Registry {
	s := &Registry{}
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	s.tools = make(map[string]Tool, len(r.tools))
	for name, t := range r.tools {
		s.tools[name] = t
	}
	return s
}
