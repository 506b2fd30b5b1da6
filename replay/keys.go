package replay

import (
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/toolgate/toolgate/codec"
)

// MissingKeyError says a history holds payloads encrypted (package codec) with a key the replay's
// DataConverter cannot decrypt: replaying it would fail in ways that read like non-determinism
// (the SDK's TMPRL1100), so [History] checks the keys first.
type MissingKeyError struct {
	// KeyID is the key the first undecryptable payload names.
	KeyID string
	// Event is the ID of the event that holds that payload.
	Event int64
	// Err is the DataConverter's error.
	Err error
}

// Error is one line: history holds payloads encrypted with key ID "X" ... (event N: cause).
func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("history holds payloads encrypted with key ID %q, which this replay cannot decrypt (event %d: %v)", e.KeyID, e.Event, e.Err)
}

func (e *MissingKeyError) Unwrap() error { return e.Err }

// checkKeys decodes every payload of h that names an encryption key and returns a
// *MissingKeyError for the first dc cannot decode, nil when all decode (or none is encrypted).
func checkKeys(h *historypb.History, dc converter.DataConverter) error {
	for _, e := range h.GetEvents() {
		var err error
		walkPayloads(e.ProtoReflect(), func(p *commonpb.Payload) bool {
			id, ok := p.GetMetadata()[codec.MetadataKeyID]
			if !ok {
				return true
			}
			// Into an interface: JSON and binary payloads decode, a protobuf one refuses the
			// interface only after the codec decrypted it.
			var v any
			if derr := dc.FromPayload(p, &v); derr != nil && !errors.Is(derr, converter.ErrValuePtrMustConcreteType) {
				err = &MissingKeyError{KeyID: string(id), Event: e.GetEventId(), Err: derr}
				return false
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// payloadName is the full name of commonpb.Payload.
var payloadName = (&commonpb.Payload{}).ProtoReflect().Descriptor().FullName()

// walkPayloads calls f with every Payload message inside m (depth first) until f returns false;
// it reports whether the walk went to the end.
func walkPayloads(m protoreflect.Message, f func(*commonpb.Payload) bool) bool {
	if m.Descriptor().FullName() == payloadName {
		if p, ok := m.Interface().(*commonpb.Payload); ok {
			return f(p)
		}
		return true
	}
	more := true
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && more; i++ {
				more = walkPayloads(l.Get(i).Message(), f)
			}
		case fd.IsMap():
			if fd.MapValue().Kind() != protoreflect.MessageKind {
				return true
			}
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				more = walkPayloads(mv.Message(), f)
				return more
			})
		default:
			more = walkPayloads(v.Message(), f)
		}
		return more
	})
	return more
}
