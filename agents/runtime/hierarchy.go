package runtime

// hierarchy is the runtime's record of which agent spawned which. It
// lives beside the agents, not in their servers, so that a parent or a
// child can go passive like any agent: a passive agent's links stay here,
// and the signals of the hierarchy (child.started, child.exit, orphaned)
// activate it like any signal. It is rebuilt at Recover from the started
// records, which name each child's parent. rt.mu guards it.
type hierarchy struct {
	parents  map[string]parentLink        // child id → its parent
	children map[string]map[string]string // parent id → tag → child id
}

// parentLink is a child's side of a link: its parent, and what the child
// does when that parent stops (Options.OnParentDeath), kept here so that a
// passive child need not be activated to learn it.
type parentLink struct {
	ref     ParentRef
	onDeath string
}

func newHierarchy() hierarchy {
	return hierarchy{parents: map[string]parentLink{}, children: map[string]map[string]string{}}
}

// link records child as spawned by ref.ID under ref.Tag.
func (h *hierarchy) link(child string, ref ParentRef, onDeath string) {
	h.parents[child] = parentLink{ref: ref, onDeath: onDeath}
	tags := h.children[ref.ID]
	if tags == nil {
		tags = map[string]string{}
		h.children[ref.ID] = tags
	}
	tags[ref.Tag] = child
}

// unlinkChild forgets child's parent and returns it; the parent keeps the
// tag only when it names another child since.
func (h *hierarchy) unlinkChild(child string) (ParentRef, bool) {
	l, ok := h.parents[child]
	if !ok {
		return ParentRef{}, false
	}
	delete(h.parents, child)
	if tags := h.children[l.ref.ID]; tags[l.ref.Tag] == child {
		delete(tags, l.ref.Tag)
		if len(tags) == 0 {
			delete(h.children, l.ref.ID)
		}
	}
	return l.ref, true
}

// takeChildren forgets parent's side of its links and returns its
// children's links, by child id. The children keep their side until
// parentStopped has applied their on_parent_death.
func (h *hierarchy) takeChildren(parent string) map[string]parentLink {
	tags := h.children[parent]
	delete(h.children, parent)
	out := make(map[string]parentLink, len(tags))
	for _, id := range tags {
		if l, ok := h.parents[id]; ok && l.ref.ID == parent {
			out[id] = l
		}
	}
	return out
}

// parentOf returns a copy of child's parent reference, or nil.
func (h *hierarchy) parentOf(child string) *ParentRef {
	l, ok := h.parents[child]
	if !ok {
		return nil
	}
	ref := l.ref
	return &ref
}

// childrenOf returns a copy of parent's children, tag → id, or nil.
func (h *hierarchy) childrenOf(parent string) map[string]string {
	tags := h.children[parent]
	if len(tags) == 0 {
		return nil
	}
	out := make(map[string]string, len(tags))
	for tag, id := range tags {
		out[tag] = id
	}
	return out
}

// child returns the id of parent's child tagged tag.
func (h *hierarchy) child(parent, tag string) (string, bool) {
	id, ok := h.children[parent][tag]
	return id, ok
}

// forget drops every link of id, as parent and as child: the agent is no
// longer this runtime's (its partition moved), and its family, which
// shares its partition, goes with it.
func (h *hierarchy) forget(id string) {
	h.unlinkChild(id)
	delete(h.children, id)
}
