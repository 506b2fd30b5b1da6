package toolbox

import (
	"strings"

	"github.com/toolgate/toolgate/toolcore"
)

// Results hold text or lists of any length, but a result's content is capped at
// toolcore.MaxContentCodePoints and the serializer cuts whatever does not fit, possibly before
// later fields such as "truncated". fitPrefix keeps the output whole instead: it shortens the
// variable part until the serialized output fits, so every field survives and "truncated" says
// that something was cut.

// fitPrefix returns build(k) for the largest k in [0, n] whose serialization is not truncated
// (build(0) if none is). It assumes a longer prefix never serializes shorter; each probe costs
// O(serializer budgets), whatever n is.
func fitPrefix(n int, build func(k int) any) any {
	if fits(build(n)) {
		return build(n)
	}
	lo, hi := 0, n // build(hi) does not fit
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		if fits(build(mid)) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return build(lo)
}

// fitText is fitPrefix over the runes of text; build gets the shown prefix and whether it is
// shorter than text.
func fitText(text string, build func(shown string, partial bool) any) any {
	starts := make([]int, 0, len(text)+1)
	for i := range text {
		starts = append(starts, i)
	}
	starts = append(starts, len(text))
	n := len(starts) - 1
	return fitPrefix(n, func(k int) any {
		return build(text[:starts[k]], k < n)
	})
}

// fits reports whether v serializes whole, without the truncation marker.
func fits(v any) bool {
	content, err := toolcore.Serialize(v)
	return err == nil && !strings.HasSuffix(content, toolcore.TruncationMarker)
}
