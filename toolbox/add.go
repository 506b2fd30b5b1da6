package toolbox

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/toolgate/toolgate/toolcore"
)

// addArgs are add's validated arguments: the operands exactly as sent.
type addArgs struct {
	Left  json.Number `json:"left"`
	Right json.Number `json:"right"`
}

// addResult is add's output. Sum is an int64 within ±(2^53-1), a *big.Int beyond (serialized as
// "<digits>n"), or a float64.
type addResult struct {
	Sum any `json:"sum"`
}

// floatPrec is the precision of non-integer sums before the final rounding to float64: both
// operands and their sum are exact at it for every literal a model writes in practice, so
// 0.1 + 0.2 is 0.3.
const floatPrec = 256

// maxSafeInteger is 2^53-1, the largest integer every JSON reader holds exactly.
var maxSafeInteger = big.NewInt(1<<53 - 1)

func addTool() (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[addArgs]{
		Name: NameAdd,
		Description: `Add two numbers: {"left":20,"right":22} gives {"sum":42}. Integers are exact at any ` +
			`size up to 1000 digits (sums beyond 2^53 come back as strings like "9007199254740993n"); ` +
			`numbers with a fraction or exponent give the nearest float64 to the exact sum.`,
		Validate: validateAdd,
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["left","right"],`+
			`"properties":{"left":{"type":"number","description":"The first addend. Integers are exact up to %[1]d digits."},`+
			`"right":{"type":"number","description":"The second addend. Integers are exact up to %[1]d digits."}}}`, MaxIntegerDigits)),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["sum"],` +
			`"properties":{"sum":{"type":["number","string"],"description":"The sum; a string like \"9007199254740993n\" for integers beyond 2^53."}}}`),
		Execute: func(_ context.Context, a addArgs) (any, error) {
			sum, reason := addNumbers(a)
			if reason != "" {
				return nil, fmt.Errorf("add: %s", reason)
			}
			return addResult{Sum: sum}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
}

func validateAdd(args toolcore.Arguments) toolcore.Decision[addArgs] {
	f, reason := readFields(args, "left", "right")
	if reason != "" {
		return toolcore.Reject[addArgs](reason)
	}
	var a addArgs
	for _, op := range []struct {
		key string
		dst *json.Number
	}{{"left", &a.Left}, {"right", &a.Right}} {
		n, present, reason := f.number(op.key)
		switch {
		case reason != "":
			return toolcore.Reject[addArgs](reason)
		case !present:
			return toolcore.Reject[addArgs](fmt.Sprintf("%q is required", op.key))
		}
		*op.dst = n
	}
	if _, reason := addNumbers(a); reason != "" {
		return toolcore.Reject[addArgs](reason)
	}
	return toolcore.Accept(a)
}

// operand is a parsed number: exactly one of i and f is set.
type operand struct {
	i *big.Int
	f *big.Float
}

// parseOperand parses a JSON number literal. Literals without fraction or exponent are exact
// integers; the others are floats at floatPrec and must lie within the float64 range.
func parseOperand(key string, n json.Number) (operand, string) {
	lit := string(n)
	digits := 0
	for _, r := range lit {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	if digits > MaxIntegerDigits {
		return operand{}, fmt.Sprintf("%q must have at most %d digits", key, MaxIntegerDigits)
	}
	if !strings.ContainsAny(lit, ".eE") {
		i, ok := new(big.Int).SetString(lit, 10)
		if !ok {
			return operand{}, fmt.Sprintf("%q must be a number", key)
		}
		return operand{i: i}, ""
	}
	x, _, err := big.ParseFloat(lit, 10, floatPrec, big.ToNearestEven)
	if err != nil {
		return operand{}, fmt.Sprintf("%q must be a number within the float64 range", key)
	}
	if v, _ := x.Float64(); math.IsInf(v, 0) {
		return operand{}, fmt.Sprintf("%q must be a number within the float64 range", key)
	}
	return operand{f: x}, ""
}

func (o operand) float() *big.Float {
	if o.f != nil {
		return o.f
	}
	return new(big.Float).SetPrec(floatPrec).SetInt(o.i)
}

// addNumbers returns the sum of validated operands, or the reason it has none.
func addNumbers(a addArgs) (any, string) {
	l, reason := parseOperand("left", a.Left)
	if reason != "" {
		return nil, reason
	}
	r, reason := parseOperand("right", a.Right)
	if reason != "" {
		return nil, reason
	}
	if l.i != nil && r.i != nil {
		s := new(big.Int).Add(l.i, r.i)
		if s.CmpAbs(maxSafeInteger) <= 0 {
			return s.Int64(), ""
		}
		return s, ""
	}
	s, _ := new(big.Float).SetPrec(floatPrec).Add(l.float(), r.float()).Float64()
	if math.IsInf(s, 0) {
		return nil, fmt.Sprintf("the sum of %q and %q is beyond the float64 range", "left", "right")
	}
	return s, ""
}
