package toolcore

// Serialization budgets (contract section 4).
const (
	MaxContentCodePoints = 4096
	TruncationMarker     = "\n[Tool output truncated]"
	MaxDepth             = 32
	MaxNodes             = 128
	MaxEntries           = 256
	MaxStringChars       = 4096
	MaxBigIntBits        = 4096
)

// SerializationError says why a value cannot be serialized; it becomes a
// TOOL_OUTPUT_SERIALIZATION_FAILED result.
type SerializationError struct {
	// Path locates the value, e.g. "$.items[3].when".
	Path string
	// Reason, e.g. "opaque struct time.Time".
	Reason string
}

func (e *SerializationError) Error() string { panic("TODO") }

// Serialize renders v as bounded deterministic JSON content, capped at MaxContentCodePoints
// including at most one TruncationMarker. It never calls user code.
func Serialize(v any) (string, error) { panic("TODO") }
