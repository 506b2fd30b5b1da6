package toolcore

import "sync"

// Registry holds immutable tools by name. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
}

// NewRegistry returns a registry holding tools, registered as one batch (see RegisterMany).
func NewRegistry(tools ...Tool) (*Registry, error) { panic("TODO") }

// Register adds one tool.
func (r *Registry) Register(t Tool) error { panic("TODO") }

// RegisterMany adds a batch atomically: the whole batch is checked first (zero Tools are
// CodeInvalidToolBatch, duplicates inside the batch or against the registry CodeDuplicateToolName)
// and the registry is changed once, or not at all.
func (r *Registry) RegisterMany(tools ...Tool) error { panic("TODO") }

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) { panic("TODO") }

// Names returns a fresh sorted copy of the registered names.
func (r *Registry) Names() []string { panic("TODO") }

// Len returns the number of registered tools.
func (r *Registry) Len() int { panic("TODO") }

// Snapshot returns an independent registry sharing the immutable tools.
func (r *Registry) Snapshot() *Registry { panic("TODO") }
