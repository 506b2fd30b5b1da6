package codec

import (
	"context"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// ActivityKeyWait is how long an activity's input decode waits for a key its keyring lacks
// (never longer than half the attempt's heartbeat timeout, nor past its deadline) before it
// fails the attempt.
const ActivityKeyWait = 30 * time.Second

// keyPollInterval is how often a waiting activity looks at its keyring again.
const keyPollInterval = 250 * time.Millisecond

// DataConverter is the SDK's default data converter with the codec of keys: put it in
// client.Options.DataConverter of every client. keys is a *Keyring, or a *KeyringWatcher so the
// keys follow their file.
//
// A payload encrypted with a key this process lacks (*KeyNotHeldError) is handled where it is
// decoded:
//   - in workflow code (the call's input, an activity's result, a signal), decoding panics with
//     a *WaitingForKeyError: under the worker's WorkflowPanicPolicy BlockWorkflow (the SDK's
//     default) the workflow task fails with that message and is retried until the keyring
//     holds the key, instead of failing the workflow for good;
//   - in an activity, decoding the input waits up to ActivityKeyWait for the keyring to gain the
//     key (logging that it waits), then fails the attempt naming the key;
//   - elsewhere (a client decoding a result), it looks at the key source once more and returns
//     the *KeyNotHeldError.
func DataConverter(keys KeySource) converter.DataConverter {
	return &dataConverter{
		DataConverter: converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), New(keys)),
		keys:          keys,
	}
}

// WaitingForKeyError is the panic of a workflow's decode of a payload encrypted with a key the
// worker lacks: the SDK turns it into a workflow task failure, retried.
type WaitingForKeyError struct {
	// KeyID is the key the payload names.
	KeyID string
}

func (e *WaitingForKeyError) Error() string {
	return fmt.Sprintf("waiting for codec key %q: this worker's keyring lacks it, so the workflow task fails and is retried until the key file gives it (rotate keys in two phases: docs/operations.md, Encrypted payloads)", e.KeyID)
}

// dataConverter decides what a missing key does by where it is decoded.
type dataConverter struct {
	converter.DataConverter
	keys     KeySource
	workflow bool             // bound to a workflow context
	wfctx    workflow.Context // that context (nil in tests that bind none)
	activity context.Context  // bound to an activity context, else nil
}

var (
	_ workflow.ContextAware                           = (*dataConverter)(nil)
	_ converter.DataConverterWithSerializationContext = (*dataConverter)(nil)
)

func (d *dataConverter) FromPayload(payload *commonpb.Payload, valuePtr any) error {
	return d.onMissingKey(func() error { return d.DataConverter.FromPayload(payload, valuePtr) })
}

func (d *dataConverter) FromPayloads(payloads *commonpb.Payloads, valuePtrs ...any) error {
	return d.onMissingKey(func() error { return d.DataConverter.FromPayloads(payloads, valuePtrs...) })
}

// WithWorkflowContext binds the converter to workflow code: a missing key panics.
func (d *dataConverter) WithWorkflowContext(ctx workflow.Context) converter.DataConverter {
	c := *d
	c.workflow, c.wfctx, c.activity = true, ctx, nil
	return &c
}

// WithContext binds the converter to ctx: in an activity, a missing key is waited for.
func (d *dataConverter) WithContext(ctx context.Context) converter.DataConverter {
	if ctx == nil || !activity.IsActivity(ctx) {
		return d
	}
	c := *d
	c.workflow, c.wfctx, c.activity = false, nil, ctx
	return &c
}

// WithSerializationContext passes sc to the codec data converter underneath.
func (d *dataConverter) WithSerializationContext(sc converter.SerializationContext) converter.DataConverter {
	c := *d
	c.DataConverter = converter.WithDataConverterSerializationContext(d.DataConverter, sc)
	return &c
}

// onMissingKey runs decode and handles its error when it is a *KeyNotHeldError (an activity
// decodes again once the key came).
func (d *dataConverter) onMissingKey(decode func() error) error {
	err := decode()
	miss, ok := errors.AsType[*KeyNotHeldError](err)
	if !ok {
		return err
	}
	switch {
	case d.workflow:
		if d.wfctx != nil {
			workflow.GetLogger(d.wfctx).Warn("waiting for a codec key this worker's keyring lacks: the workflow task fails and is retried until the key file gives it (rotate keys in two phases)",
				"keyId", miss.KeyID)
		}
		panic(&WaitingForKeyError{KeyID: miss.KeyID})
	case d.activity != nil:
		if d.waitForKey(d.activity, miss.KeyID) {
			return decode()
		}
		return fmt.Errorf("decode activity input: waited %s for codec key %q: %w", d.activityWait(d.activity), miss.KeyID, err)
	}
	return err
}

// activityWait is how long an activity's decode waits for a key.
func (d *dataConverter) activityWait(ctx context.Context) time.Duration {
	wait := ActivityKeyWait
	if hb := activity.GetInfo(ctx).HeartbeatTimeout; hb > 0 && hb/2 < wait {
		wait = hb / 2
	}
	return wait
}

// waitForKey polls the key source until it holds id, ctx ends or the wait is over.
func (d *dataConverter) waitForKey(ctx context.Context, id string) bool {
	wait := d.activityWait(ctx)
	activity.GetLogger(ctx).Warn("waiting for a codec key this worker's keyring lacks (rotate keys in two phases)",
		"keyId", id, "upTo", wait.String())
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(keyPollInterval)
	defer tick.Stop()
	for {
		if r, ok := d.keys.(refresher); ok {
			r.refresh()
		}
		if d.keys.Keyring().Has(id) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}
