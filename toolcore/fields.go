package toolcore

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// structFields is how encoding/json sees a struct type: the one field resolution Serialize and
// Arguments.Decode share, so that both agree on every name (computed once per type).
type structFields struct {
	// opaque: the struct has an unexported field (not an embedded struct), which encoding/json
	// would skip silently; Serialize refuses such a struct instead of dropping data.
	opaque bool
	fields []jsonField    // sorted by name
	byName map[string]int // index into fields
}

// jsonField is one JSON-visible field, possibly promoted from embedded structs.
type jsonField struct {
	name      string
	quoted    string // `"name":`; names never need escapes (identifiers and valid tag names)
	runes     int    // code points of name
	index     []int
	typ       reflect.Type
	scalar    reflect.Kind // serScalarKind of typ
	omitEmpty bool
	omitZero  bool
	// stringOpt: the ",string" option on a bool, number or string field (encoding/json then
	// decodes the value from a JSON string).
	stringOpt bool
}

// field returns the field named exactly name.
func (s *structFields) field(name string) (jsonField, bool) {
	i, ok := s.byName[name]
	if !ok {
		return jsonField{}, false
	}
	return s.fields[i], true
}

// structFieldsCache caches *structFields by reflect.Type; the entries are immutable.
var structFieldsCache sync.Map

// structFieldsOf returns the fields of struct type t.
func structFieldsOf(t reflect.Type) *structFields {
	if info, ok := structFieldsCache.Load(t); ok {
		return info.(*structFields)
	}
	info, _ := structFieldsCache.LoadOrStore(t, newStructFields(t))
	return info.(*structFields)
}

// newStructFields follows encoding/json's typeFields: breadth-first over untagged embedded
// structs, unexported fields skipped, Go's shadowing rules with json tags dominating, and a name
// that stays ambiguous (two fields as shallow and as tagged) dropped, including a name promoted
// twice through two embeddings of the same type.
func newStructFields(t reflect.Type) *structFields {
	type field struct {
		jsonField
		tagged bool
	}
	type level struct {
		typ   reflect.Type
		index []int
	}
	info := &structFields{}
	var current, next []level
	next = []level{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	var fields []field
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, l := range current {
			if visited[l.typ] {
				continue
			}
			visited[l.typ] = true
			for i := range l.typ.NumField() {
				sf := l.typ.Field(i)
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if sf.Anonymous {
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						info.opaque = true
						continue
					}
				} else if !sf.IsExported() {
					info.opaque = true
					continue
				}
				name, opts, skip := parseTag(sf.Tag)
				if skip {
					continue
				}
				index := append(slices.Clip(l.index), i)
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					nf := field{
						jsonField: jsonField{
							name:      cmp.Or(name, sf.Name),
							index:     index,
							typ:       sf.Type,
							scalar:    serScalarKind(sf.Type),
							omitEmpty: opts.has("omitempty"),
							omitZero:  opts.has("omitzero"),
							stringOpt: opts.has("string") && quotable(sf.Type),
						},
						tagged: name != "",
					}
					fields = append(fields, nf)
					if count[l.typ] > 1 {
						// Several embeddings of l.typ at this depth: a duplicate makes the
						// name ambiguous below.
						fields = append(fields, nf)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, level{typ: ft, index: index})
				}
			}
		}
	}
	slices.SortFunc(fields, func(a, b field) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	info.byName = map[string]int{}
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		// fields[i] dominates unless the next one is as shallow and as tagged.
		if j == i+1 || len(fields[i].index) != len(fields[i+1].index) || fields[i].tagged != fields[i+1].tagged {
			f := fields[i].jsonField
			f.quoted = `"` + f.name + `":`
			f.runes = utf8.RuneCountInString(f.name)
			info.byName[f.name] = len(info.fields)
			info.fields = append(info.fields, f)
		}
		i = j
	}
	return info
}

// quotable reports whether the ",string" option applies to a field of type t (encoding/json:
// bools, numbers and strings, also behind one pointer).
func quotable(t reflect.Type) bool {
	if t.Name() == "" && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// tagOptions is the part of a json tag after the name.
type tagOptions string

// parseTag splits a field's json tag: skip is true for "-"; an invalid name is "" (the field's
// Go name applies), as in encoding/json.
func parseTag(tag reflect.StructTag) (name string, opts tagOptions, skip bool) {
	s := tag.Get("json")
	if s == "-" {
		return "", "", true
	}
	name, rest, _ := strings.Cut(s, ",")
	if !validTagName(name) {
		name = ""
	}
	return name, tagOptions(rest), false
}

// has reports whether the options contain want.
func (o tagOptions) has(want string) bool {
	s := string(o)
	for s != "" {
		var opt string
		opt, s, _ = strings.Cut(s, ",")
		if opt == want {
			return true
		}
	}
	return false
}

// validTagName is encoding/json's rule for a json tag name.
func validTagName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
