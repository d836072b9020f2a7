// Package notes is the Service behind the samples' review_note tool (the
// review-notes command beside it): it records the notes hostd sends it, so
// the demo can show which calls reached a tool and which the platform's hook
// stopped before it. It is a sample, not part of Loadout: a tool Service
// written against Loadout's wire format (internal/exthost), signature check
// (internal/outbound) and token check (internal/toolauth), as a platform team
// would write its own.
package notes
