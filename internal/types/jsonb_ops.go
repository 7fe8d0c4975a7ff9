package types

import (
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// The jsonb operators and functions of PostgreSQL 15 (jsonfuncs.c,
// jsonb_op.c): extraction (-> ->> #> #>>), containment and existence
// (@> <@ ? ?| ?&), concatenation and deletion (|| - #-), and the scalar
// functions over jsonb. Every result is a new tree; inputs are shared,
// never modified.

func init() {
	jsonCmp := func(a, b Value) int { return compareJSONB(a.JSONB(), b.JSONB()) }
	addComparisons(Jsonb, Jsonb, compareOps(jsonCmp))

	textArr := ArrayOf(Text)
	addBinary("->", Jsonb, Text, Jsonb, func(a, b Value) (Value, error) {
		return jsonResult(a.JSONB().Lookup(b.s)), nil
	})
	addBinary("->", Jsonb, Int4, Jsonb, func(a, b Value) (Value, error) {
		return jsonResult(jsonIndex(rawScalarArray(a.JSONB()), b.n)), nil
	})
	addBinary("->>", Jsonb, Text, Text, func(a, b Value) (Value, error) {
		return jsonTextResult(a.JSONB().Lookup(b.s)), nil
	})
	addBinary("->>", Jsonb, Int4, Text, func(a, b Value) (Value, error) {
		return jsonTextResult(jsonIndex(rawScalarArray(a.JSONB()), b.n)), nil
	})
	addBinary("#>", Jsonb, textArr, Jsonb, func(a, b Value) (Value, error) {
		return jsonResult(jsonPath(a.JSONB(), b.Elems())), nil
	})
	addBinary("#>>", Jsonb, textArr, Text, func(a, b Value) (Value, error) {
		return jsonTextResult(jsonPath(a.JSONB(), b.Elems())), nil
	})
	addBinary("@>", Jsonb, Jsonb, Bool, func(a, b Value) (Value, error) {
		return MakeBool(jsonContainsTop(a.JSONB(), b.JSONB())), nil
	})
	addBinary("<@", Jsonb, Jsonb, Bool, func(a, b Value) (Value, error) {
		return MakeBool(jsonContainsTop(b.JSONB(), a.JSONB())), nil
	})
	addBinary("?", Jsonb, Text, Bool, func(a, b Value) (Value, error) {
		return MakeBool(jsonExists(a.JSONB(), b.s)), nil
	})
	addBinary("?|", Jsonb, textArr, Bool, func(a, b Value) (Value, error) {
		for _, k := range b.Elems() {
			if !k.IsNull() && jsonExists(a.JSONB(), k.s) {
				return MakeBool(true), nil
			}
		}
		return MakeBool(false), nil
	})
	addBinary("?&", Jsonb, textArr, Bool, func(a, b Value) (Value, error) {
		for _, k := range b.Elems() {
			if !k.IsNull() && !jsonExists(a.JSONB(), k.s) {
				return MakeBool(false), nil
			}
		}
		return MakeBool(true), nil
	})
	addBinary("||", Jsonb, Jsonb, Jsonb, func(a, b Value) (Value, error) {
		return MakeJSONB(jsonConcat(a.JSONB(), b.JSONB())), nil
	})
	addBinary("-", Jsonb, Text, Jsonb, func(a, b Value) (Value, error) {
		return jsonDeleteKeys(a, []Value{b})
	})
	addBinary("-", Jsonb, textArr, Jsonb, func(a, b Value) (Value, error) {
		return jsonDeleteKeys(a, b.Elems())
	})
	addBinary("-", Jsonb, Int4, Jsonb, jsonDeleteIndex)
	addBinary("#-", Jsonb, textArr, Jsonb, jsonDeletePath)
	// json's extraction operators are json.go's: an untyped operand
	// finds both as ambiguous as PostgreSQL does ('{}' -> 'a').

	addFunc("jsonb_typeof", Text, func(a []Value) (Value, error) {
		return MakeText(jsonTypeName(a[0].JSONB().Kind)), nil
	}, Jsonb)
	addFunc("jsonb_array_length", Int4, func(a []Value) (Value, error) {
		j := a[0].JSONB()
		switch j.Kind {
		case JSONArray:
			return MakeInt(Int4, int64(len(j.Elems))), nil
		case JSONObject:
			return Null, errs.New(errs.InvalidParameterValue, "cannot get array length of a non-array")
		}
		return Null, errs.New(errs.InvalidParameterValue, "cannot get array length of a scalar")
	}, Jsonb)
	addFunc("jsonb_strip_nulls", Jsonb, func(a []Value) (Value, error) {
		return MakeJSONB(jsonStripNulls(a[0].JSONB())), nil
	}, Jsonb)
	addFunc("jsonb_pretty", Text, func(a []Value) (Value, error) {
		return MakeText(string(appendJSONPretty(nil, a[0].JSONB(), 0))), nil
	}, Jsonb)
	addFunc("jsonb_exists", Bool, func(a []Value) (Value, error) {
		return MakeBool(jsonExists(a[0].JSONB(), a[1].s)), nil
	}, Jsonb, Text)
	set := func(a []Value) (Value, error) {
		create := len(a) < 4 || a[3].Bool()
		return jsonSetPath(a[0], a[1].Elems(), a[2].JSONB(), create, jsonSetReplace)
	}
	addFunc("jsonb_set", Jsonb, set, Jsonb, textArr, Jsonb)
	addFunc("jsonb_set", Jsonb, set, Jsonb, textArr, Jsonb, Bool)
	insert := func(a []Value) (Value, error) {
		mode := jsonSetInsertBefore
		if len(a) == 4 && a[3].Bool() {
			mode = jsonSetInsertAfter
		}
		return jsonSetPath(a[0], a[1].Elems(), a[2].JSONB(), true, mode)
	}
	addFunc("jsonb_insert", Jsonb, insert, Jsonb, textArr, Jsonb)
	addFunc("jsonb_insert", Jsonb, insert, Jsonb, textArr, Jsonb, Bool)
	// The set-returning functions, as functions returning the array of
	// their rows; the binder unnests them (internal/sql).
	addFunc(JSONBArrayElementsArray, ArrayOf(Jsonb), func(a []Value) (Value, error) {
		elems, err := jsonElements(a[0].JSONB())
		if err != nil {
			return Null, err
		}
		out := make([]Value, len(elems))
		for i, e := range elems {
			out[i] = MakeJSONB(e)
		}
		return MakeArray(Jsonb, out), nil
	}, Jsonb)
	addFunc(JSONBArrayElementsTextArray, textArr, func(a []Value) (Value, error) {
		elems, err := jsonElements(a[0].JSONB())
		if err != nil {
			return Null, err
		}
		out := make([]Value, len(elems))
		for i, e := range elems {
			out[i] = jsonTextResult(e)
		}
		return MakeArray(Text, out), nil
	}, Jsonb)
	addFunc(JSONBEachKeysArray, textArr, func(a []Value) (Value, error) {
		j := a[0].JSONB()
		if j.Kind != JSONObject {
			return Null, errs.New(errs.InvalidParameterValue, "cannot call jsonb_each on a non-object")
		}
		out := make([]Value, len(j.Keys))
		for i, k := range j.Keys {
			out[i] = MakeText(k)
		}
		return MakeArray(Text, out), nil
	}, Jsonb)
	addFunc(JSONBObjectKeysArray, textArr, func(a []Value) (Value, error) {
		j := a[0].JSONB()
		switch j.Kind {
		case JSONObject:
		case JSONArray:
			return Null, errs.New(errs.InvalidParameterValue, "cannot call jsonb_object_keys on an array")
		default:
			return Null, errs.New(errs.InvalidParameterValue, "cannot call jsonb_object_keys on a scalar")
		}
		out := make([]Value, len(j.Keys))
		for i, k := range j.Keys {
			out[i] = MakeText(k)
		}
		return MakeArray(Text, out), nil
	}, Jsonb)
}

// The names of the array-returning functions behind jsonb's set-returning
// functions. They hold a character no SQL identifier can, so no query can
// call them by name.
const (
	JSONBArrayElementsArray     = "jsonb_array_elements\x00array"
	JSONBArrayElementsTextArray = "jsonb_array_elements_text\x00array"
	JSONBObjectKeysArray        = "jsonb_object_keys\x00array"
	JSONBEachKeysArray          = "jsonb_each\x00keys"
)

// jsonElements returns an array's elements for jsonb_array_elements(_text).
func jsonElements(j *JSON) ([]*JSON, error) {
	switch j.Kind {
	case JSONArray:
		return j.Elems, nil
	case JSONObject:
		return nil, errs.New(errs.InvalidParameterValue, "cannot extract elements from an object")
	}
	return nil, errs.New(errs.InvalidParameterValue, "cannot extract elements from a scalar")
}

// jsonTypeName is jsonb_typeof's name of a kind.
func jsonTypeName(k JSONKind) string {
	switch k {
	case JSONNull:
		return "null"
	case JSONString:
		return "string"
	case JSONNumber:
		return "number"
	case JSONBool:
		return "boolean"
	case JSONArray:
		return "array"
	}
	return "object"
}

// jsonResult is a jsonb result: NULL for a missing node.
func jsonResult(j *JSON) Value {
	if j == nil {
		return Null
	}
	return MakeJSONB(j)
}

// jsonTextResult is a ->> result: a string's text, NULL for JSON null or
// a missing node, and jsonb_out's text otherwise.
func jsonTextResult(j *JSON) Value {
	if j == nil || j.Kind == JSONNull {
		return Null
	}
	if j.Kind == JSONString {
		return MakeText(j.Str)
	}
	return MakeText(FormatJSONB(j))
}

// jsonIndex returns an array's element i (negative counts from the end),
// or nil. The -> and ->> operators pass a top-level scalar as the
// one-element array jsonb stores it as, so '1' -> 0 is 1, as in
// PostgreSQL; paths (#>) do not.
func jsonIndex(j *JSON, i int64) *JSON {
	if j.Kind != JSONArray {
		return nil
	}
	n := int64(len(j.Elems))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil
	}
	return j.Elems[i]
}

// jsonPathIndex parses a path element as an array subscript, as strtol
// over the whole element does.
func jsonPathIndex(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n\r\v\f")
	n, err := strconv.ParseInt(t, 10, 32)
	if err != nil || t == "" {
		return 0, false
	}
	return n, true
}

// jsonPath walks path through j (#> and #>>): object keys and array
// subscripts; nil when a step is missing or NULL.
func jsonPath(j *JSON, path []Value) *JSON {
	for _, p := range path {
		if p.IsNull() {
			return nil
		}
		switch j.Kind {
		case JSONObject:
			j = j.Lookup(p.s)
		case JSONArray:
			i, ok := jsonPathIndex(p.s)
			if !ok {
				return nil
			}
			j = jsonIndex(j, i)
		default:
			return nil
		}
		if j == nil {
			return nil
		}
	}
	return j
}

// jsonScalarEqual reports whether two scalar nodes are equal.
func jsonScalarEqual(a, b *JSON) bool {
	return a.Kind == b.Kind && compareJSONNode(a, b) == 0
}

func isJSONContainer(j *JSON) bool { return j.Kind == JSONArray || j.Kind == JSONObject }

// jsonContainsTop is @>: a top-level scalar is a one-element array that
// only a scalar can be contained in, as JsonbDeepContains treats raw
// scalars.
func jsonContainsTop(a, b *JSON) bool {
	switch {
	case a.Kind == JSONObject || b.Kind == JSONObject:
		return a.Kind == b.Kind && jsonContains(a, b)
	case !isJSONContainer(a) && b.Kind == JSONArray:
		return false
	}
	return jsonContains(asArray(a), asArray(b))
}

// rawScalarArray returns a top-level scalar as a one-element array, and
// containers as they are.
func rawScalarArray(j *JSON) *JSON {
	if isJSONContainer(j) {
		return j
	}
	return JSONArrayNode([]*JSON{j})
}

// asArray returns an array, or a top-level scalar as a one-element array.
func asArray(j *JSON) *JSON {
	if j.Kind == JSONArray {
		return j
	}
	return JSONArrayNode([]*JSON{j})
}

// jsonContains is JsonbDeepContains over containers of the same kind:
// every pair of an object must be in the other with a containing value;
// every element of an array must be matched by some element of the other
// (a scalar by an equal scalar, a container by a containing one of its
// kind).
func jsonContains(a, b *JSON) bool {
	if b.Kind == JSONObject {
		for i, k := range b.Keys {
			va, vb := a.Lookup(k), b.Vals[i]
			if va == nil {
				return false
			}
			if !isJSONContainer(vb) {
				if !jsonScalarEqual(va, vb) {
					return false
				}
				continue
			}
			if va.Kind != vb.Kind || !jsonContains(va, vb) {
				return false
			}
		}
		return true
	}
	for _, eb := range b.Elems {
		found := false
		for _, ea := range a.Elems {
			if isJSONContainer(eb) {
				found = ea.Kind == eb.Kind && jsonContains(ea, eb)
			} else {
				found = jsonScalarEqual(ea, eb)
			}
			if found {
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// jsonExists is ?: an object's key, an array's string element, or a
// top-level string equal to key.
func jsonExists(j *JSON, key string) bool {
	switch j.Kind {
	case JSONObject:
		return j.Lookup(key) != nil
	case JSONArray:
		for _, e := range j.Elems {
			if e.Kind == JSONString && e.Str == key {
				return true
			}
		}
		return false
	}
	return j.Kind == JSONString && j.Str == key
}

// jsonConcat is ||: two objects merge (the right's pairs win); otherwise
// both sides become arrays (an object or scalar a one-element array) and
// are concatenated.
func jsonConcat(a, b *JSON) *JSON {
	if a.Kind == JSONObject && b.Kind == JSONObject {
		keys := append(append([]string(nil), a.Keys...), b.Keys...)
		vals := append(append([]*JSON(nil), a.Vals...), b.Vals...)
		return NewJSONObject(keys, vals)
	}
	x, y := asArray(a), asArray(b)
	elems := make([]*JSON, 0, len(x.Elems)+len(y.Elems))
	return JSONArrayNode(append(append(elems, x.Elems...), y.Elems...))
}

func errDeleteScalar() error {
	return errs.New(errs.InvalidParameterValue, "cannot delete from scalar")
}

// jsonDeleteKeys is jsonb - text and jsonb - text[]: the pairs with those
// keys of an object, or the string elements equal to them of an array.
func jsonDeleteKeys(v Value, keys []Value) (Value, error) {
	j := v.JSONB()
	if !isJSONContainer(j) {
		return Null, errDeleteScalar()
	}
	drop := func(s string) bool {
		for _, k := range keys {
			if !k.IsNull() && k.s == s {
				return true
			}
		}
		return false
	}
	if j.Kind == JSONObject {
		o := &JSON{Kind: JSONObject}
		for i, k := range j.Keys {
			if !drop(k) {
				o.Keys, o.Vals = append(o.Keys, k), append(o.Vals, j.Vals[i])
			}
		}
		return MakeJSONB(o), nil
	}
	elems := []*JSON{}
	for _, e := range j.Elems {
		if e.Kind != JSONString || !drop(e.Str) {
			elems = append(elems, e)
		}
	}
	return MakeJSONB(JSONArrayNode(elems)), nil
}

// jsonDeleteIndex is jsonb - integer: an array without element i
// (negative counts from the end; out of range leaves it whole).
func jsonDeleteIndex(a, b Value) (Value, error) {
	j := a.JSONB()
	switch j.Kind {
	case JSONObject:
		return Null, errs.New(errs.InvalidParameterValue, "cannot delete from object using integer index")
	case JSONArray:
	default:
		return Null, errDeleteScalar()
	}
	n, i := int64(len(j.Elems)), b.n
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return a, nil
	}
	elems := append(append([]*JSON{}, j.Elems[:i]...), j.Elems[i+1:]...)
	return MakeJSONB(JSONArrayNode(elems)), nil
}

// jsonStripNulls removes, at every depth, the object pairs whose value is
// null (array elements stay).
func jsonStripNulls(j *JSON) *JSON {
	switch j.Kind {
	case JSONObject:
		o := &JSON{Kind: JSONObject}
		for i, k := range j.Keys {
			if j.Vals[i].Kind == JSONNull {
				continue
			}
			o.Keys, o.Vals = append(o.Keys, k), append(o.Vals, jsonStripNulls(j.Vals[i]))
		}
		return o
	case JSONArray:
		elems := make([]*JSON, len(j.Elems))
		for i, e := range j.Elems {
			elems[i] = jsonStripNulls(e)
		}
		return JSONArrayNode(elems)
	}
	return j
}

// jsonSetMode says what setPath does at the end of the path.
type jsonSetMode uint8

const (
	jsonSetReplace jsonSetMode = iota
	jsonSetInsertBefore
	jsonSetInsertAfter
	jsonSetDelete
)

// jsonDeletePath is #-: the tree without the node at path.
func jsonDeletePath(a, b Value) (Value, error) {
	if !isJSONContainer(a.JSONB()) {
		return Null, errs.New(errs.InvalidParameterValue, "cannot delete path in scalar")
	}
	return jsonSetPath(a, b.Elems(), nil, false, jsonSetDelete)
}

// jsonSetPath is jsonb_set, jsonb_insert and #- (PostgreSQL's setPath):
// it walks path through the containers of v and replaces, inserts or
// deletes at its end. A missing object key is added when create is set;
// an array subscript past either end adds at that end.
func jsonSetPath(v Value, path []Value, nv *JSON, create bool, mode jsonSetMode) (Value, error) {
	j := v.JSONB()
	if !isJSONContainer(j) {
		if mode == jsonSetDelete {
			return Null, errs.New(errs.InvalidParameterValue, "cannot delete path in scalar")
		}
		return Null, errs.New(errs.InvalidParameterValue, "cannot set path in scalar")
	}
	empty := len(j.Elems) == 0 && len(j.Keys) == 0
	if len(path) == 0 || empty && (mode == jsonSetDelete || mode == jsonSetReplace && !create) {
		return v, nil
	}
	r, err := setPath(j, path, 0, nv, create, mode)
	if err != nil {
		return Null, err
	}
	return MakeJSONB(r), nil
}

func setPath(j *JSON, path []Value, level int, nv *JSON, create bool, mode jsonSetMode) (*JSON, error) {
	if path[level].IsNull() {
		return nil, errs.Newf(errs.NullValueNotAllowed, "path element at position %d is null", level+1)
	}
	last := level == len(path)-1
	key := path[level].s
	switch j.Kind {
	case JSONObject:
		o := &JSON{Kind: JSONObject, Keys: append([]string(nil), j.Keys...), Vals: append([]*JSON(nil), j.Vals...)}
		found := -1
		for i, k := range o.Keys {
			if k == key {
				found = i
				break
			}
		}
		if found < 0 {
			if last && create && mode != jsonSetDelete {
				return NewJSONObject(append(o.Keys, key), append(o.Vals, nv)), nil
			}
			return j, nil
		}
		if last {
			switch mode {
			case jsonSetDelete:
				o.Keys = append(o.Keys[:found], o.Keys[found+1:]...)
				o.Vals = append(o.Vals[:found], o.Vals[found+1:]...)
				return o, nil
			case jsonSetInsertBefore, jsonSetInsertAfter:
				err := errs.New(errs.InvalidParameterValue, "cannot replace existing key")
				if e, ok := err.(*errs.Error); ok {
					e.Hint = "Try using the function jsonb_set to replace key value."
				}
				return nil, err
			}
			o.Vals[found] = nv
			return o, nil
		}
		if path[level+1].IsNull() {
			return nil, errs.Newf(errs.NullValueNotAllowed, "path element at position %d is null", level+2)
		}
		if isJSONContainer(o.Vals[found]) {
			c, err := setPath(o.Vals[found], path, level+1, nv, create, mode)
			if err != nil {
				return nil, err
			}
			o.Vals[found] = c
		}
		return o, nil
	case JSONArray:
		idx, ok := jsonPathIndex(key)
		if !ok {
			return nil, errs.Newf(errs.InvalidTextRep, "path element at position %d is not an integer: \"%s\"", level+1, key)
		}
		n := int64(len(j.Elems))
		if idx < 0 {
			if -idx > n {
				idx = -1 // before the first element
			} else {
				idx += n
			}
		}
		elems := append([]*JSON{}, j.Elems...)
		if idx < 0 || idx >= n {
			if last && create && mode != jsonSetDelete {
				if idx < 0 {
					return JSONArrayNode(append([]*JSON{nv}, elems...)), nil
				}
				return JSONArrayNode(append(elems, nv)), nil
			}
			return j, nil
		}
		if last {
			switch mode {
			case jsonSetDelete:
				return JSONArrayNode(append(elems[:idx], elems[idx+1:]...)), nil
			case jsonSetInsertBefore:
				return JSONArrayNode(append(elems[:idx], append([]*JSON{nv}, elems[idx:]...)...)), nil
			case jsonSetInsertAfter:
				return JSONArrayNode(append(elems[:idx+1], append([]*JSON{nv}, elems[idx+1:]...)...)), nil
			}
			elems[idx] = nv
			return JSONArrayNode(elems), nil
		}
		if path[level+1].IsNull() {
			return nil, errs.Newf(errs.NullValueNotAllowed, "path element at position %d is null", level+2)
		}
		if isJSONContainer(elems[idx]) {
			c, err := setPath(elems[idx], path, level+1, nv, create, mode)
			if err != nil {
				return nil, err
			}
			elems[idx] = c
		}
		return JSONArrayNode(elems), nil
	}
	return j, nil
}
