package policy_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// BenchmarkPolicyEvaluate is one decision of a 10-policy set (docs/BENCHMARKS.md, "Policy
// evaluation"; target: under 50 us per call):
//
//	go test -run '^$' -bench BenchmarkPolicyEvaluate -benchmem ./policy
func BenchmarkPolicyEvaluate(b *testing.B) {
	var text strings.Builder
	text.WriteString(doneWhen) // 5 policies, one of them approve
	for i := range 5 {
		fmt.Fprintf(&text, "@id(\"tenant-%d\")\n@reason(\"tenant %d may not call %d\")\nforbid (principal, action, resource == Toolgate::Tool::\"tool%d\") when { principal.tenant == \"t%d\" && context.arguments has n && context.arguments.n > %d };\n", i, i, i, i, i, i)
	}
	s, err := policy.Parse("bench.cedar", []byte(text.String()))
	if err != nil {
		b.Fatal(err)
	}
	if n := len(s.Policies()); n != 10 {
		b.Fatalf("%d policies, want 10", n)
	}
	p := &toolcore.Principal{Issuer: "https://idp", Subject: "alice", Tenant: "t1", Groups: []string{"staff", "eng", "oncall"}}
	r := policy.Request{Principal: p, Tool: policy.Tool{Name: "add", SideEffect: toolcore.ReadOnly},
		Arguments: json.RawMessage(`{"left":999,"right":1,"note":"a short note","tags":["a","b"]}`)}
	if d := s.Evaluate(r); d.Effect != wire.PolicyAllow {
		b.Fatalf("decision %+v, want allow", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Evaluate(r)
	}
}
