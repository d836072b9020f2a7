// Package reviewnotes is the Service behind the samples' review_note tool: it
// records the notes hostd sends it, so the demo can show which calls reached
// a tool and which the platform's hook stopped before it.
package reviewnotes
