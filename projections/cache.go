package projections

// lru is a bounded least-recently-used map from key to decoded state. It is
// owned by the runner's pass goroutine and not safe for concurrent use.
type lru struct {
	cap  int
	m    map[string]*node
	root node // sentinel of a ring: root.next is the most recent
}

type node struct {
	key        string
	state      any
	dirty      bool // changed since the last checkpoint
	prev, next *node
}

func newLRU(capacity int) *lru {
	c := &lru{cap: capacity, m: make(map[string]*node, min(capacity, 4096))}
	c.root.next, c.root.prev = &c.root, &c.root
	return c
}

func (c *lru) len() int { return len(c.m) }

// get returns the node of key and marks it most recently used.
func (c *lru) get(key string) (*node, bool) {
	n, ok := c.m[key]
	if ok && c.root.next != n {
		c.unlink(n)
		c.pushFront(n)
	}
	return n, ok
}

// add inserts key (absent) as the most recently used and returns its node
// and, when the cache was full, the evicted least recently used node.
func (c *lru) add(key string, state any) (n, evicted *node) {
	n = &node{key: key, state: state}
	c.m[key] = n
	c.pushFront(n)
	if len(c.m) > c.cap {
		evicted = c.root.prev
		c.unlink(evicted)
		delete(c.m, evicted.key)
	}
	return n, evicted
}

func (c *lru) pushFront(n *node) {
	n.prev, n.next = &c.root, c.root.next
	c.root.next.prev = n
	c.root.next = n
}

func (c *lru) unlink(n *node) {
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = nil, nil
}
