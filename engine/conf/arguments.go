package conf

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Arguments are the arguments of a plugin or action, as decoded from YAML:
// values are int, float64, bool, string, nil, or nested []any and
// map[string]any.
//
// The typed accessors convert a value the way Volcano's framework.Arguments
// does, accepting a little more (numbers written as strings, for instance),
// but report a malformed value as an error naming the key instead of logging
// and ignoring it. A missing key, or one whose value is null, yields the given
// default and no error. All accessors are safe on a nil Arguments.
type Arguments map[string]any

// Keys returns the argument names in sorted order.
func (a Arguments) Keys() []string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// argError reports a malformed argument value.
func argError(key, want string, got any) error {
	return fmt.Errorf("argument %q: want %s, got %s", key, want, describe(got))
}

// describe formats a value for an error message: strings quoted, others as
// printed by fmt.
func describe(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%v", v)
}

// lookup returns the value of key, and false if it is missing or null.
func (a Arguments) lookup(key string) (any, bool) {
	v, ok := a[key]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

// Int returns the integer argument key, or def if it is not set. It accepts
// integers, floats with no fractional part, and strings holding either, e.g.
// 10, 10.0 and "10".
func (a Arguments) Int(key string, def int) (int, error) {
	v, ok := a.lookup(key)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case int:
		return x, nil
	case int64:
		if x >= math.MinInt && x <= math.MaxInt {
			return int(x), nil
		}
	case uint64:
		if x <= math.MaxInt {
			return int(x), nil
		}
	case float64:
		if i, ok := floatToInt(x); ok {
			return i, nil
		}
	case string:
		s := strings.TrimSpace(x)
		if i, err := strconv.ParseInt(s, 10, 0); err == nil {
			return int(i), nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			if i, ok := floatToInt(f); ok {
				return i, nil
			}
		}
	}
	return def, argError(key, "integer", v)
}

// floatToInt converts f to an int if it is a whole number in range.
func floatToInt(f float64) (int, bool) {
	if f != math.Trunc(f) || f < math.MinInt || f >= math.MaxInt {
		return 0, false
	}
	return int(f), true
}

// Float64 returns the numeric argument key, or def if it is not set. It
// accepts integers, floats and strings holding a number; infinities and NaN
// are rejected.
func (a Arguments) Float64(key string, def float64) (float64, error) {
	v, ok := a.lookup(key)
	if !ok {
		return def, nil
	}
	var f float64
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case float64:
		f = x
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return def, argError(key, "number", v)
		}
		f = p
	default:
		return def, argError(key, "number", v)
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return def, argError(key, "finite number", v)
	}
	return f, nil
}

// Bool returns the boolean argument key, or def if it is not set. It accepts
// booleans and strings spelling one: those strconv.ParseBool accepts ("true",
// "false", "1", "0", ...) and the YAML 1.1 words yes/no/on/off/y/n, which
// Volcano's YAML library reads as booleans, in any case.
func (a Arguments) Bool(key string, def bool) (bool, error) {
	v, ok := a.lookup(key)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		s := strings.TrimSpace(x)
		if b, err := strconv.ParseBool(s); err == nil {
			return b, nil
		}
		switch strings.ToLower(s) {
		case "yes", "y", "on":
			return true, nil
		case "no", "n", "off":
			return false, nil
		}
	}
	return def, argError(key, "boolean", v)
}

// String returns the string argument key, or def if it is not set. Scalars
// other than strings (numbers, booleans) are accepted and formatted, since
// older Volcano releases read every argument as a string; lists and mappings
// are errors.
func (a Arguments) String(key string, def string) (string, error) {
	v, ok := a.lookup(key)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return def, argError(key, "string", v)
}

// Duration returns the duration argument key, or def if it is not set. The
// value must be a Go duration string such as "30s" or "1m30s" (a
// time.Duration value is accepted too); bare numbers are rejected because
// their unit would be a guess.
func (a Arguments) Duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := a.lookup(key)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case time.Duration:
		return x, nil
	case string:
		if d, err := time.ParseDuration(strings.TrimSpace(x)); err == nil {
			return d, nil
		}
	}
	return def, argError(key, `duration such as "30s"`, v)
}
