package client

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/mocks"

	"github.com/toolgate/toolgate/wire"
)

// consentLook is what one read of a call finds: its state, its ToolOutcome and, when that says it
// waits, the URL its query answers ("" for a query that says it no longer waits).
type consentLook struct {
	closed  bool
	outcome string
	url     string
}

// ConsentWatch against a scripted server, one look per read: each new request is delivered once
// however often it is read, and its end once (the wait ended, a new request replaced it, or the
// call closed); a call that never waits costs no query.
func TestConsentWatchDeliversEachRequestAndItsEndOnce(t *testing.T) {
	const waiting = wire.OutcomeAwaitingConsent
	tests := []struct {
		name        string
		looks       []consentLook
		want        []string // "wait URL" or "end URL", in order
		wantQueries int
	}{
		{name: "never waits: no query", looks: []consentLook{{}, {}, {closed: true, outcome: wire.OutcomeOK}}, want: nil},
		{name: "one request read three times, then the call goes on and completes",
			looks:       []consentLook{{}, {outcome: waiting, url: "u1"}, {outcome: waiting, url: "u1"}, {outcome: waiting, url: "u1"}, {}, {closed: true, outcome: wire.OutcomeOK}},
			want:        []string{"wait u1", "end u1"},
			wantQueries: 3},
		{name: "a new request replaces the one before",
			looks:       []consentLook{{outcome: waiting, url: "u1"}, {outcome: waiting, url: "u2"}, {closed: true, outcome: wire.OutcomeOK}},
			want:        []string{"wait u1", "end u1", "wait u2", "end u2"},
			wantQueries: 2},
		{name: "two rounds of one URL",
			looks:       []consentLook{{outcome: waiting, url: "u1"}, {}, {outcome: waiting, url: "u1"}, {closed: true, outcome: "TOOL_EXECUTION_FAILED"}},
			want:        []string{"wait u1", "end u1", "wait u1", "end u1"},
			wantQueries: 2},
		{name: "the query says the wait ended before the attribute does",
			looks:       []consentLook{{outcome: waiting, url: "u1"}, {outcome: waiting}, {closed: true, outcome: wire.OutcomeOK}},
			want:        []string{"wait u1", "end u1"},
			wantQueries: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sdk := mocks.NewClient(t)
			dc := converter.GetDefaultDataConverter()
			next := 0
			var current consentLook
			sdk.On("DescribeWorkflowExecution", mock.Anything, "toolcall-c1", "").Return(
				func(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
					current = tt.looks[min(next, len(tt.looks)-1)]
					next++
					status := enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
					if current.closed {
						status = enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
					}
					fields := map[string]*commonpb.Payload{}
					if current.outcome != "" {
						p, err := dc.ToPayload(current.outcome)
						require.NoError(t, err)
						fields[wire.SearchAttributeToolOutcome] = p
					}
					return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
						Status: status, SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields}}}, nil
				})
			queries := 0
			if tt.wantQueries > 0 {
				sdk.On("QueryWorkflow", mock.Anything, "toolcall-c1", "", wire.QueryConsent).Return(
					func(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
						queries++
						return consentValue{Waiting: current.url != "", Request: wire.ConsentRequest{Provider: "p", URL: current.url}}, nil
					})
			}
			var got []string
			w := New(sdk, Options{}).WatchConsent(context.Background(), "toolcall-c1", time.Nanosecond, func(_ context.Context, st wire.ConsentState) error {
				verb := "end "
				if st.Waiting {
					verb = "wait "
				}
				got = append(got, verb+st.Request.URL)
				return nil
			})
			select {
			case <-w.Done():
			case <-time.After(time.Minute):
				t.Fatal("the watch did not end with the call")
			}
			assert.Nil(t, w.Stop(), "every wait's end delivered")
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantQueries, queries)
		})
	}
}

// consentValue is a query's answer as the SDK hands it over.
type consentValue wire.ConsentState

func (v consentValue) HasValue() bool { return true }

func (v consentValue) Get(ptr any) error {
	*ptr.(*wire.ConsentState) = wire.ConsentState(v)
	return nil
}
