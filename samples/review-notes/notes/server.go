package notes

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/toolauth"
)

// maxRequest bounds one invocation; hostd sends at most 1 MiB of call.
const maxRequest = 2 << 20

// maxNotes bounds what the sample keeps in memory.
const maxNotes = 10000

// Note is one recorded note.
type Note struct {
	ID     int    `json:"id"`
	CallID string `json:"callId"`
	Text   string `json:"text"`
	// From is the agent pod whose hostd made the call, "namespace/pod"
	// (workspace name), when the Service verifies hostd's token.
	From string `json:"from,omitempty"`
}

// List is what GET /notes answers: the recorded notes, oldest first.
type List struct {
	Notes []Note `json:"notes"`
}

// ToolName is the tool this Service implements: what hostd signs its calls
// for.
const ToolName = "review_note"

// Server records notes: POST /notes takes a ToolInvocation of review_note and
// answers a ToolAnswer; GET /notes lists what was recorded.
type Server struct {
	// SigningKeyFile, when set, makes the server refuse (401) any request
	// that outbound.Verifier refuses: not signed with the file's secrets,
	// signed for another tool or URL than review_note at URL, stale, or a
	// replay. Only the hostd that holds the key can record notes, each call
	// once.
	SigningKeyFile string
	// URL is where hostd calls this Service, as the published registry
	// names it (http://review-notes.team-a.svc:8080/notes): the audience a
	// signed call must name. Required with SigningKeyFile.
	URL string
	// Tolerance bounds a signed call's age; zero means
	// outbound.DefaultTolerance.
	Tolerance time.Duration
	// Tokens, when set, makes the server refuse any call without a token
	// it accepts: hostd's projected ServiceAccount token (audience
	// loadout.dev/hostd) of a pod bound to a Workspace in an allowed
	// namespace, checked with a TokenReview. No token or one the API server
	// refuses (another audience, expired, its pod gone) is a 401; a valid
	// token of another namespace or of a pod no hostd governs is a 403.
	Tokens *toolauth.Verifier

	verifier *outbound.Verifier
	mu       sync.Mutex
	notes    []Note
}

// Handler serves the tool.
func (s *Server) Handler() http.Handler {
	if s.SigningKeyFile != "" {
		s.verifier = outbound.NewVerifier(outbound.VerifyOptions{KeyFile: s.SigningKeyFile, Tolerance: s.Tolerance,
			Audience: outbound.Audience{Kind: outbound.AudienceTool, Name: ToolName, URL: s.URL}})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /notes", s.record)
	mux.HandleFunc("GET /notes", s.list)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	return mux
}

// Notes returns the recorded notes, oldest first.
func (s *Server) Notes() []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Note{}, s.notes...)
}

func (s *Server) record(w http.ResponseWriter, r *http.Request) {
	// Who is calling, before reading what they send.
	var from string
	if s.Tokens != nil {
		c, err := s.Tokens.VerifyRequest(r)
		if err != nil {
			toolauth.Refuse(w, err)
			return
		}
		from = fmt.Sprintf("%s/%s (workspace %s)", c.Namespace, c.Pod, c.Workspace)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil || len(body) > maxRequest {
		http.Error(w, "unreadable or oversized request", http.StatusBadRequest)
		return
	}
	if s.verifier != nil {
		if err := s.verifier.Verify(r.Header, body); err != nil {
			http.Error(w, "refused: "+err.Error(), http.StatusUnauthorized)
			return
		}
	}
	var inv exthost.ToolInvocation
	if err := json.Unmarshal(body, &inv); err != nil || inv.Kind != exthost.ToolInvocationKind {
		http.Error(w, "expected a ToolInvocation", http.StatusBadRequest)
		return
	}
	text, ok := inv.Call.Arguments["text"].(string)
	if !ok || text == "" {
		// hostd checks the input schema first, so this is a second line only.
		answer(w, exthost.ToolAnswer{IsError: true, Content: []exthost.Content{{Type: "text", Text: "a note needs a text"}}})
		return
	}
	s.mu.Lock()
	if len(s.notes) >= maxNotes {
		s.mu.Unlock()
		answer(w, exthost.ToolAnswer{IsError: true, Content: []exthost.Content{{Type: "text", Text: "the note book is full"}}})
		return
	}
	n := Note{ID: len(s.notes) + 1, CallID: inv.Call.ID, Text: text, From: from}
	s.notes = append(s.notes, n)
	s.mu.Unlock()
	answer(w, exthost.ToolAnswer{
		Content: []exthost.Content{{Type: "text", Text: fmt.Sprintf("note %d recorded", n.ID)}},
		Details: map[string]any{"noteId": n.ID},
	})
}

func (s *Server) list(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(List{Notes: s.Notes()})
}

func answer(w http.ResponseWriter, a exthost.ToolAnswer) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(a)
}
