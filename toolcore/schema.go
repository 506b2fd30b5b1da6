package toolcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"

	invopop "github.com/invopop/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema limits and names.
const (
	// MaxSchemaDepth bounds the nesting of a tool's schema documents.
	MaxSchemaDepth = 64
	// MaxSchemaExponent bounds the decimal exponent of a number literal the schema validator
	// accepts (1e999 passes, 1e1000 does not): the schema library turns numbers into exact
	// rationals, whose cost grows with the exponent, and the validator runs in workflow code.
	MaxSchemaExponent = 999
	// SchemaDialect is the dialect of generated schemas (and the default of explicit ones).
	SchemaDialect = "https://json-schema.org/draft/2020-12/schema"
)

// schemaURL names a tool's schema document inside its compiler; nothing is ever loaded from it.
const schemaURL = "urn:toolgate:schema"

// compiledSchema is a schema in canonical JSON with its compiled validator. Immutable.
type compiledSchema struct {
	canonical string
	schema    *jsonschema.Schema
}

var (
	numberType    = reflect.TypeFor[json.Number]()
	argumentsType = reflect.TypeFor[Arguments]()
)

// generateSchema reflects the input schema of A with invopop/jsonschema: properties from the
// json tags (a field without omitempty is required), `jsonschema:"description=...,enum=..."`
// tags, additionalProperties false, nested named structs in $defs, no $id. json.Number is a
// number; Arguments and types that are not JSON objects give the permissive {"type":"object"}
// (arguments are always an object; the validator maps them to A).
func generateSchema(t reflect.Type) (raw []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			raw, err = nil, fmt.Errorf("generate a schema from %s: %s", t, panicText(v, "panic"))
		}
	}()
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base == argumentsType || (base.Kind() != reflect.Struct && base.Kind() != reflect.Map) {
		return []byte(`{"$schema":"` + SchemaDialect + `","type":"object"}`), nil
	}
	r := &invopop.Reflector{
		Anonymous:      true, // no $id derived from the package path
		ExpandedStruct: true, // the root is the object itself, not a $ref
		Mapper: func(t reflect.Type) *invopop.Schema {
			switch t {
			case numberType:
				return &invopop.Schema{Type: "number"}
			case argumentsType:
				return &invopop.Schema{Type: "object"}
			}
			return nil
		},
	}
	s := r.ReflectFromType(t)
	if s.Type == "" {
		s.Type = "object"
	}
	raw, err = json.Marshal(s)
	if err != nil {
		return nil, err
	}
	// ExpandedStruct makes the root type's definition the document itself; a recursive root
	// type still refers to its old place in $defs: point it at the document.
	if name := base.Name(); name != "" {
		old, _ := json.Marshal("#/$defs/" + name)
		raw = bytes.ReplaceAll(raw, append([]byte(`"$ref":`), old...), []byte(`"$ref":"#"`))
	}
	return raw, nil
}

// compileSchema canonicalizes raw (one JSON object, no duplicate keys, at most MaxSchemaDepth
// levels) and compiles it with santhosh-tekuri/jsonschema (draft 2020-12 unless $schema says
// otherwise). External references are refused: nothing is loaded from files or the network.
// what names the schema in errors.
func compileSchema(raw []byte, what string) (*compiledSchema, error) {
	canonical, err := canonicalObject(raw, what, MaxSchemaDepth)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(canonical))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("%s does not compile: %s", what, strings.ReplaceAll(err.Error(), schemaURL, what))
	}
	return &compiledSchema{canonical: canonical, schema: s}, nil
}

// checkObjectSchema requires the input schema's top-level "type" to be "object", as MCP and the
// model providers do.
func checkObjectSchema(s *compiledSchema) error {
	for k, v := range members(s.canonical) {
		if k == "type" {
			if v == `"object"` {
				return nil
			}
			return fmt.Errorf(`input schema: top-level "type" must be "object", got %s`, v)
		}
	}
	return errors.New(`input schema: top-level "type" must be "object"`)
}

// refuseLoader refuses every external reference, so compiling never reads files or the network.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not loaded (%s)", url)
}

// check validates args against the schema and returns "" or the one reason the model reads. It is
// deterministic: the instance is decoded with numbers as json.Number (never float64), and of
// several errors the reason names the first by instance location (JSON Pointer tokens compared in
// order, a parent before its children), then schema keyword location, then text.
func (s *compiledSchema) check(args Arguments) string {
	inst, reason := instance(args.object(), nil)
	if reason != "" {
		return reason
	}
	err := s.schema.Validate(inst)
	if err == nil {
		return ""
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return ErrorText(err)
	}
	var all []*jsonschema.ValidationError
	collectLeaves(verr, &all)
	first := slices.MinFunc(all, compareValidationErrors)
	return schemaReason(first)
}

// instance turns canonical JSON (trusted: produced by the call boundary) into the generic value
// the schema library validates, numbers as json.Number, and refuses number literals whose
// exponent is beyond MaxSchemaExponent. path locates v for the reason.
func instance(v string, path []string) (any, string) {
	switch v[0] {
	case '{':
		n := 0
		for range members(v) {
			n++
		}
		obj := make(map[string]any, n)
		for k, m := range members(v) {
			x, reason := instance(m, append(path, k))
			if reason != "" {
				return nil, reason
			}
			obj[k] = x
		}
		return obj, ""
	case '[':
		arr := []any{}
		for e := range elements(v) {
			x, reason := instance(e, append(path, strconv.Itoa(len(arr))))
			if reason != "" {
				return nil, reason
			}
			arr = append(arr, x)
		}
		return arr, ""
	case '"':
		return unquote(v), ""
	case 't':
		return true, ""
	case 'f':
		return false, ""
	case 'n':
		return nil, ""
	}
	if i := strings.IndexAny(v, "eE"); i >= 0 {
		exp := strings.TrimLeft(strings.TrimLeft(v[i+1:], "+-"), "0")
		if n, err := strconv.Atoi(exp); len(exp) > 6 || err == nil && n > MaxSchemaExponent {
			return nil, fmt.Sprintf("%s: the exponent of %s is beyond ±%d", pointerText(path), shortLiteral(v), MaxSchemaExponent)
		}
	}
	return json.Number(v), ""
}

func shortLiteral(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// collectLeaves appends the errors of e's tree that have no causes.
func collectLeaves(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	if len(e.Causes) == 0 {
		*out = append(*out, e)
		return
	}
	for _, c := range e.Causes {
		collectLeaves(c, out)
	}
}

var schemaPrinter = message.NewPrinter(language.English)

func compareValidationErrors(a, b *jsonschema.ValidationError) int {
	if c := slices.Compare(a.InstanceLocation, b.InstanceLocation); c != 0 {
		return c
	}
	if c := strings.Compare(keywordLocation(a), keywordLocation(b)); c != 0 {
		return c
	}
	return strings.Compare(a.ErrorKind.LocalizedString(schemaPrinter), b.ErrorKind.LocalizedString(schemaPrinter))
}

func keywordLocation(e *jsonschema.ValidationError) string {
	return e.SchemaURL + "/" + strings.Join(e.ErrorKind.KeywordPath(), "/")
}

// pointerText names an instance location for the model: "arguments" for the root, else the
// quoted JSON Pointer tokens joined by "/", e.g. "left" or "items/0/name".
func pointerText(path []string) string {
	if len(path) == 0 {
		return "arguments"
	}
	return quoteForMessage(strings.Join(path, "/"))
}

// schemaReason renders one validation error as a reason the model can act on.
func schemaReason(e *jsonschema.ValidationError) string {
	at := pointerText(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return fmt.Sprintf("%s: expected %s, got %s", at, strings.Join(k.Want, " or "), k.Got)
	case *kind.Required:
		missing := make([]string, len(k.Missing))
		for i, m := range k.Missing {
			missing[i] = pointerText(append(slices.Clone(e.InstanceLocation), m))
		}
		slices.Sort(missing)
		if len(missing) == 1 {
			return missing[0] + " is required"
		}
		return strings.Join(missing, ", ") + " are required"
	case *kind.AdditionalProperties:
		props := slices.Sorted(slices.Values(k.Properties))
		quoted := make([]string, len(props))
		for i, p := range props {
			quoted[i] = quoteForMessage(p)
		}
		if len(e.InstanceLocation) == 0 {
			if len(quoted) == 1 {
				return "unknown argument " + quoted[0]
			}
			return "unknown arguments " + strings.Join(quoted, ", ")
		}
		return fmt.Sprintf("%s: unknown property %s", at, strings.Join(quoted, ", "))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = jsonText(w)
		}
		return fmt.Sprintf("%s: must be one of %s, got %s", at, strings.Join(want, ", "), jsonText(k.Got))
	case *kind.Const:
		return fmt.Sprintf("%s: must be %s, got %s", at, jsonText(k.Want), jsonText(k.Got))
	case *kind.MinLength:
		return fmt.Sprintf("%s: must have at least %d characters, got %d", at, k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("%s: must have at most %d characters, got %d", at, k.Want, k.Got)
	case *kind.Minimum:
		return fmt.Sprintf("%s: must be at least %s, got %s", at, ratText(k.Want), ratText(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("%s: must be at most %s, got %s", at, ratText(k.Want), ratText(k.Got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s: must be greater than %s, got %s", at, ratText(k.Want), ratText(k.Got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s: must be less than %s, got %s", at, ratText(k.Want), ratText(k.Got))
	case *kind.MinItems:
		return fmt.Sprintf("%s: must have at least %d items, got %d", at, k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("%s: must have at most %d items, got %d", at, k.Want, k.Got)
	case *kind.Pattern:
		return fmt.Sprintf("%s: must match the pattern %s", at, quoteForMessage(k.Want))
	}
	return fmt.Sprintf("%s: %s", at, e.ErrorKind.LocalizedString(schemaPrinter))
}

// jsonText renders a decoded JSON value (numbers as json.Number) as JSON; map keys come out sorted.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// ratText renders an exact rational as an integer or a decimal when it is one, else as p/q.
func ratText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	if s, exact := r.FloatPrec(); exact {
		return r.FloatString(s)
	}
	return r.RatString()
}

// defineSchemas compiles the input schema (explicit, or generated from the argument type) and
// the optional output schema.
func defineSchemas(argType reflect.Type, inputRaw, outputRaw []byte) (input, output *compiledSchema, err error) {
	if len(inputRaw) == 0 {
		if inputRaw, err = generateSchema(argType); err != nil {
			return nil, nil, fmt.Errorf("%w (give InputSchema explicitly)", err)
		}
	}
	if input, err = compileSchema(inputRaw, "input schema"); err != nil {
		return nil, nil, err
	}
	if err := checkObjectSchema(input); err != nil {
		return nil, nil, err
	}
	if len(outputRaw) > 0 {
		if output, err = compileSchema(outputRaw, "output schema"); err != nil {
			return nil, nil, err
		}
	}
	return input, output, nil
}

// decodeValidator is the validator of a definition without Validate: the schema has accepted the
// arguments, so decode them strictly into A (exact numbers, no unknown fields).
func decodeValidator[A any](args Arguments) Decision[A] {
	var a A
	if p, ok := any(&a).(*Arguments); ok {
		*p = args
		return Accept(a)
	}
	if err := args.Decode(&a); err != nil {
		return Reject[A](ErrorText(err))
	}
	return Accept(a)
}
