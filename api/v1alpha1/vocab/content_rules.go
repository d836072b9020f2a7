package vocab

// ReasonContentRefused (a Workspace's Ready and Resolved conditions): a
// skill or tool breaks one of the platform's content rules; the message
// names it, the rule and the rule's message (docs/concepts.md, "Content
// rules"). The Workspace keeps its last good content under the current
// policy.
const ReasonContentRefused ConditionReason = "ContentRefused"
