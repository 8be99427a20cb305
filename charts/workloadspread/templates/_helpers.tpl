{{/*
The base of the objects' names: fullnameOverride, else nameOverride, else "workloadspread" — not
derived from the release (one install per cluster). The manager is told the names it looks up
(Service, Lease, whitelist ConfigMap, certificate Secret) by its flags; the webhook configurations
keep fixed names (src/cli/install-values.ts installNames is the same table).
*/}}
{{- define "workloadspread.fullname" -}}
{{- .Values.fullnameOverride | default .Values.nameOverride | default "workloadspread" -}}
{{- end }}

{{- define "workloadspread.managerName" -}}
{{- printf "%s-manager" (include "workloadspread.fullname" .) -}}
{{- end }}

{{- define "workloadspread.serviceName" -}}
{{- printf "%s-webhook" (include "workloadspread.fullname" .) -}}
{{- end }}

{{- define "workloadspread.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (include "workloadspread.managerName" .) -}}
{{- end }}

{{- /* The webhook URL without trailing slashes (webhook.url), or "" for the Service. */ -}}
{{- define "workloadspread.webhookUrl" -}}
{{- regexReplaceAll "/+$" .Values.webhook.url "" -}}
{{- end }}

{{- /*
A Go duration (the schema checked its form: 15s, 1m30s, 1500ms) in whole milliseconds, by adding
it to a fixed time with Go's own duration parser (dateModify).
*/ -}}
{{- define "workloadspread.durationMs" -}}
{{- $t0 := toDate "2006-01-02" "2000-01-01" -}}
{{- $t := mustDateModify . $t0 -}}
{{- add (mul (sub ($t | unixEpoch) ($t0 | unixEpoch)) 1000) ($t | date ".000" | trimPrefix "." | atoi) -}}
{{- end }}

{{- define "workloadspread.namespace" -}}
{{- default .Release.Namespace .Values.namespace.name -}}
{{- end }}

{{- define "workloadspread.labels" -}}
app.kubernetes.io/name: workloadspread
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "workloadspread.selectorLabels" -}}
app.kubernetes.io/name: workloadspread
app.kubernetes.io/component: manager
{{- end }}

{{- /* The metadata lines spliced into each CRD file after its top-level `metadata:` (crds.yaml). */ -}}
{{- define "workloadspread.crdMetadata" -}}
{{ printf "\nmetadata:" }}
{{- if .Values.crds.keep }}
  annotations:
    helm.sh/resource-policy: keep
{{- end }}
  labels:
    {{- include "workloadspread.labels" . | nindent 4 }}
{{ end }}
