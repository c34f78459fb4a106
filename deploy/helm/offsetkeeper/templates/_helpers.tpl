{{/* The release's full name: the release name, or <release>-offsetkeeper. */}}
{{- define "offsetkeeper.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Selector labels: stable across upgrades. */}}
{{- define "offsetkeeper.selectorLabels" -}}
app.kubernetes.io/component: daemon
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "offsetkeeper.labels" -}}
{{ include "offsetkeeper.selectorLabels" . }}
app.kubernetes.io/part-of: offsetkeeper
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "offsetkeeper.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "offsetkeeper.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "offsetkeeper.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/*
GOMEMLIMIT: goMemLimit, or 90% of resources.limits.memory (Ki, Mi, Gi, K, M
or G), rounded down to a MiB; none without a memory limit.
*/}}
{{- define "offsetkeeper.goMemLimit" -}}
{{- if .Values.goMemLimit -}}
{{- .Values.goMemLimit -}}
{{- else -}}
{{- $limit := "" -}}
{{- with .Values.resources -}}{{- with .limits -}}{{- $limit = toString (.memory | default "") -}}{{- end -}}{{- end -}}
{{- if $limit -}}
{{- $kib := 0 -}}
{{- if hasSuffix "Gi" $limit -}}{{- $kib = mul (trimSuffix "Gi" $limit | atoi) 1048576 -}}
{{- else if hasSuffix "Mi" $limit -}}{{- $kib = mul (trimSuffix "Mi" $limit | atoi) 1024 -}}
{{- else if hasSuffix "Ki" $limit -}}{{- $kib = trimSuffix "Ki" $limit | atoi -}}
{{- else if hasSuffix "G" $limit -}}{{- $kib = div (mul (trimSuffix "G" $limit | atoi) 1000000000) 1024 -}}
{{- else if hasSuffix "M" $limit -}}{{- $kib = div (mul (trimSuffix "M" $limit | atoi) 1000000) 1024 -}}
{{- else if hasSuffix "K" $limit -}}{{- $kib = div (mul (trimSuffix "K" $limit | atoi) 1000) 1024 -}}
{{- else -}}{{- fail (printf "resources.limits.memory %q: want an integer with Ki, Mi, Gi, K, M or G, or set goMemLimit" $limit) -}}
{{- end -}}
{{- if le (int $kib) 0 -}}{{- fail (printf "resources.limits.memory %q: want an integer with Ki, Mi, Gi, K, M or G, or set goMemLimit" $limit) -}}{{- end -}}
{{- printf "%dMiB" (div (mul $kib 9) 10240) -}}
{{- end -}}
{{- end -}}
{{- end -}}
