package agents

import (
	"fmt"
	"maps"
	"strings"
)

// StateOp is a change to state that an action returns in Result.Ops. Cmd
// applies the operations of one result in order, after Result.State, to a
// copy: the state the action was given is never modified. For a skill's
// action every path is relative to the skill's state key.
//
// The five operations are Set, Replace, DeleteKeys, SetPath and DeletePath;
// the set is closed so that replay needs no code but this package's.
type StateOp interface {
	apply(root map[string]any, scope []string) (map[string]any, error)
}

// Set deep-merges Values into the state: objects are merged member by
// member, any other value replaces what was there.
type Set struct{ Values map[string]any }

// Replace replaces the whole state (a skill's: its slice) with State.
type Replace struct{ State map[string]any }

// DeleteKeys removes top-level members; absent ones are ignored.
type DeleteKeys struct{ Keys []string }

// SetPath sets the value at Path, creating objects along the way. It fails
// when a member on the way holds something other than an object.
type SetPath struct {
	Path  []string
	Value any
}

// DeletePath removes the member at Path; a path that does not exist is
// ignored.
type DeletePath struct{ Path []string }

func (op Set) apply(root map[string]any, scope []string) (map[string]any, error) {
	vals, err := normalizeObject(op.Values)
	if err != nil {
		return nil, fmt.Errorf("set: %w", err)
	}
	return updateScope(root, scope, func(cur map[string]any) (map[string]any, error) {
		return deepMerge(cur, vals), nil
	})
}

func (op Replace) apply(root map[string]any, scope []string) (map[string]any, error) {
	vals, err := normalizeObject(op.State)
	if err != nil {
		return nil, fmt.Errorf("replace: %w", err)
	}
	return updateScope(root, scope, func(map[string]any) (map[string]any, error) { return vals, nil })
}

func (op DeleteKeys) apply(root map[string]any, scope []string) (map[string]any, error) {
	return updateScope(root, scope, func(cur map[string]any) (map[string]any, error) {
		out := maps.Clone(cur)
		for _, k := range op.Keys {
			delete(out, k)
		}
		return out, nil
	})
}

func (op SetPath) apply(root map[string]any, scope []string) (map[string]any, error) {
	if len(op.Path) == 0 {
		return nil, fmt.Errorf("set path: the path is empty; use Replace for the whole state")
	}
	v, err := normalize(op.Value)
	if err != nil {
		return nil, fmt.Errorf("set path %s: %w", strings.Join(op.Path, "."), err)
	}
	out, err := setAt(root, join(scope, op.Path), v)
	if err != nil {
		return nil, fmt.Errorf("set path %s: %w", strings.Join(op.Path, "."), err)
	}
	return out, nil
}

func (op DeletePath) apply(root map[string]any, scope []string) (map[string]any, error) {
	if len(op.Path) == 0 {
		return nil, fmt.Errorf("delete path: the path is empty")
	}
	out, _ := deleteAt(root, join(scope, op.Path))
	return out, nil
}

func join(scope, path []string) []string {
	if len(scope) == 0 {
		return path
	}
	return append(append(make([]string, 0, len(scope)+len(path)), scope...), path...)
}

// updateScope replaces the object at scope (root itself when scope is
// empty) with fn's result, copying the objects on the way.
func updateScope(root map[string]any, scope []string, fn func(map[string]any) (map[string]any, error)) (map[string]any, error) {
	if len(scope) == 0 {
		return fn(root)
	}
	cur, _ := getObject(root, scope)
	next, err := fn(cur)
	if err != nil {
		return nil, err
	}
	return setAt(root, scope, next)
}

func getObject(root map[string]any, path []string) (map[string]any, bool) {
	cur := root
	for _, k := range path {
		m, ok := asObject(cur[k])
		if !ok {
			return nil, false
		}
		cur = m
	}
	return cur, true
}

// setAt returns a copy of m with v at path. Only the objects along the path
// are copied; everything else is shared with m, which stays unchanged.
func setAt(m map[string]any, path []string, v any) (map[string]any, error) {
	out := cloneObject(m)
	k := path[0]
	if len(path) == 1 {
		out[k] = v
		return out, nil
	}
	var child map[string]any
	switch c := m[k].(type) {
	case nil:
	case map[string]any:
		child = c
	case State:
		child = c
	default:
		return nil, fmt.Errorf("member %q holds a %s, not an object", k, jsonKind(c))
	}
	next, err := setAt(child, path[1:], v)
	if err != nil {
		return nil, err
	}
	out[k] = next
	return out, nil
}

// deleteAt returns m without the member at path and whether anything was
// deleted; when nothing was, it returns m itself.
func deleteAt(m map[string]any, path []string) (map[string]any, bool) {
	k := path[0]
	cur, ok := m[k]
	if !ok {
		return m, false
	}
	if len(path) == 1 {
		out := maps.Clone(m)
		delete(out, k)
		return out, true
	}
	child, isObj := asObject(cur)
	if !isObj {
		return m, false
	}
	next, changed := deleteAt(child, path[1:])
	if !changed {
		return m, false
	}
	out := maps.Clone(m)
	out[k] = next
	return out, true
}

// deepMerge returns base with over merged in; objects merge recursively,
// other values replace. Neither argument is modified.
func deepMerge(base, over map[string]any) map[string]any {
	out := cloneObject(base)
	for k, v := range over {
		if vo, ok := v.(map[string]any); ok {
			if bo, ok := asObject(out[k]); ok {
				out[k] = deepMerge(bo, vo)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// cloneObject returns a shallow copy of m that is never nil. maps.Clone
// copies a small map's storage whole, which is faster than inserting its
// members one by one into a new map.
func cloneObject(m map[string]any) map[string]any {
	if m == nil {
		return make(map[string]any, 1)
	}
	return maps.Clone(m)
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any, State:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
