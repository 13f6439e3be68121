package converse

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// slots counts the calls whose tool code is running, abandoned calls included,
// so that Concurrency bounds the code that really runs. A call answered at its
// timeout while its goroutine goes on keeps its slot until the tool returns.
// The zero value has no slot taken.
type slots struct {
	mu      sync.Mutex
	held    []*slot       // in the order they were taken
	release chan struct{} // closed when a slot is given back; nil until someone waits
}

// slot is one running call.
type slot struct {
	name, id  string
	abandoned bool // answered already; its code still runs
	returned  bool // the tool returned and the slot is free
}

// take gives c a slot if fewer than limit are held. Otherwise it returns a
// channel closed when a slot is given back.
func (s *slots) take(limit int, c toolCall) (*slot, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.held) < limit {
		sl := &slot{name: c.name, id: c.id}
		s.held = append(s.held, sl)
		return sl, nil
	}
	if s.release == nil {
		s.release = make(chan struct{})
	}
	return nil, s.release
}

// give frees sl once its tool has returned; it reports whether the call had
// been abandoned.
func (s *slots) give(sl *slot) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl.returned = true
	s.held = slices.DeleteFunc(s.held, func(h *slot) bool { return h == sl })
	if s.release != nil {
		close(s.release)
		s.release = nil
	}
	return sl.abandoned
}

// abandon marks sl as answered while its tool still runs, and reports
// whether it does; a call whose tool has returned is not abandoned.
func (s *slots) abandon(sl *slot) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sl.returned {
		return false
	}
	sl.abandoned = true
	return true
}

// abandoned counts the abandoned calls still running.
func (s *slots) abandoned() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, h := range s.held {
		if h.abandoned {
			n++
		}
	}
	return n
}

// holders names the calls holding the slots, for the answer of a call that
// could not get one: the first three, then how many more.
func (s *slots) holders() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for i, h := range s.held {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(s.held)-i))
			break
		}
		name := fmt.Sprintf("tool %q (toolUseId %q", h.name, h.id)
		if h.abandoned {
			name += ", answered already and still running"
		}
		names = append(names, name+")")
	}
	return strings.Join(names, ", ")
}
