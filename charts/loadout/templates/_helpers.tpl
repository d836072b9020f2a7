{{/* Labels on every object: config/'s, plus Helm's own. */}}
{{- define "loadout.labels" -}}
app.kubernetes.io/name: loadout
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* Labels of the manager's objects. */}}
{{- define "loadout.managerLabels" -}}
{{ include "loadout.labels" . }}
app.kubernetes.io/component: manager
{{- end }}

{{/* The manager's pod labels and selector (immutable: as config/manager). */}}
{{- define "loadout.selectorLabels" -}}
app.kubernetes.io/name: loadout
app.kubernetes.io/component: manager
{{- end }}

{{/* Platform namespaces, as a list. */}}
{{- define "loadout.platformNamespaces" -}}
{{- if .Values.platformNamespaces }}{{ toJson .Values.platformNamespaces }}{{ else }}{{ toJson (list .Release.Namespace) }}{{ end }}
{{- end }}

{{/* Namespaces the manager needs Roles in when rbac.scope is namespace. */}}
{{- define "loadout.watchedNamespaces" -}}
{{- $all := concat (include "loadout.platformNamespaces" . | fromJsonArray) .Values.rbac.watchNamespaces }}
{{- toJson (uniq $all) }}
{{- end }}

{{/* The manager ServiceAccount as an RBAC subject. */}}
{{- define "loadout.managerSubject" -}}
- kind: ServiceAccount
  name: loadout-manager
  namespace: {{ .Release.Namespace }}
{{- end }}

{{/* The rules of a generated role file under files/ (see hack/sync-charts.sh). */}}
{{- define "loadout.rules" -}}
{{- $role := .root.Files.Get .file | fromYaml }}
{{- if or (hasKey $role "Error") (not $role.rules) }}{{ fail (printf "%s: no rules (%s)" .file ($role.Error | default "empty")) }}{{ end }}
{{- toYaml $role.rules }}
{{- end }}
