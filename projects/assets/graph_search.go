package assets

import (
	"sort"
	"strings"
)

// SearchHit is one note a Search found.
type SearchHit struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Score int    `json:"score"`
	// Snippet is the first line of the note holding a query term, cut to
	// snippetMax bytes.
	Snippet string `json:"snippet"`
}

const (
	// searchDefaultLimit is the limit when a caller gives none (≤ 0).
	searchDefaultLimit = 20
	// bodyCountCap keeps one note that repeats a word a thousand times
	// from outranking the note that is about it.
	bodyCountCap = 10
	snippetMax   = 200
)

// Search finds the notes holding every term of query (split on spaces,
// compared case-insensitively as substrings) in their title, id or text,
// best first, at most limit (searchDefaultLimit when limit ≤ 0). The score
// sums over the terms:
//
//	10 if the term is in the title
//	 5 if the term is in the id
//	 n, the term's count in the text (title line included), capped at 10
//
// Ties go to the smaller id. A blank query finds nothing.
func (g *Graph) Search(query string, limit int) []SearchHit {
	terms := strings.Fields(strings.ToLower(query))
	if len(terms) == 0 {
		return nil
	}
	if limit <= 0 {
		limit = searchDefaultLimit
	}
	var hits []SearchHit
	for i := range g.nodes {
		n := &g.nodes[i]
		score, first := 0, -1
		for _, t := range terms {
			inTitle := strings.Contains(n.lowerT, t)
			inID := strings.Contains(n.lowerID, t)
			at := strings.Index(n.lower, t)
			if !inTitle && !inID && at < 0 {
				score = 0
				break
			}
			if inTitle {
				score += 10
			}
			if inID {
				score += 5
			}
			if at >= 0 {
				score += min(countCapped(n.lower[at:], t, bodyCountCap), bodyCountCap)
				if first < 0 || at < first {
					first = at
				}
			}
		}
		if score == 0 {
			continue
		}
		hits = append(hits, SearchHit{ID: n.id, Title: n.title, Score: score, Snippet: snippet(n, first)})
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].Score != hits[b].Score {
			return hits[a].Score > hits[b].Score
		}
		return hits[a].ID < hits[b].ID
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// countCapped counts t in s, stopping at limit.
func countCapped(s, t string, limit int) int {
	n := 0
	for n < limit {
		i := strings.Index(s, t)
		if i < 0 {
			break
		}
		n++
		s = s[i+len(t):]
	}
	return n
}

// snippet is the line of the note's text holding byte offset at of its
// lower-cased text. Lower-casing may change lengths, so the line is found
// by number, not by offset.
func snippet(n *node, at int) string {
	if at < 0 {
		return ""
	}
	line := strings.Count(n.lower[:at], "\n")
	lines := strings.SplitN(n.text, "\n", line+2)
	if line >= len(lines) {
		return ""
	}
	s := strings.TrimSpace(lines[line])
	if len(s) > snippetMax {
		cut := snippetMax
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
