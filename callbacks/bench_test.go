package callbacks

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/secrets"
)

// BenchmarkMintAndServe is what the endpoint adds to a callback: mint a URL (read the key, seal)
// and serve a POST to it (Host, limit, open, read the body, encode the answer), the update to
// Temporal a fake that accepts at once.
func BenchmarkMintAndServe(b *testing.B) {
	h := &harness{clock: &clock{now: time.Unix(1_800_000_000, 0)}}
	ep, err := New(b.Context(), Options{URL: base, Keys: secrets.Map{DefaultKeyName: keyA}, Client: &fakeCall{}, RequestsPerMinute: 1 << 30, Now: h.clock.Now})
	if err != nil {
		b.Fatal(err)
	}
	body := `{"id":"evt_1","type":"charge.succeeded","data":{"amount":4200}}`
	b.ReportAllocs()
	for b.Loop() {
		u, _, _, err := ep.Mint(b.Context(), "toolcall-pay-1", "payment", time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, u, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		ep.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
