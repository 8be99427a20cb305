import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatFieldError, root, type FieldError } from './field-errors.ts';
import { podTemplateDecodeError, QUANTITY_FORMAT_ERROR, validatePodSpec, validatePodTemplateSpec } from './validation.ts';

const texts = (errors: FieldError[]): string[] => errors.map(formatFieldError);
const spec = root('spec');
const main = (extra: Record<string, unknown> = {}) => ({ name: 'main', image: 'nginx', ...extra });
const podSpec = (extra: Record<string, unknown> = {}) => ({ containers: [main()], ...extra });
const check = (s: unknown): string[] => texts(validatePodSpec(s, spec));

describe('validatePodSpec: containers', () => {
  const cases: [string, unknown, string[]][] = [
    ['a minimal pod spec is valid', podSpec(), []],
    ['containers are required', { containers: [] }, ['spec.containers: Required value']],
    ['containers missing entirely', {}, ['spec.containers: Required value']],
    ['name required', { containers: [{ image: 'x' }] }, ['spec.containers[0].name: Required value']],
    ['name must be a DNS label', { containers: [main({ name: 'Main' })] }, [
      "spec.containers[0].name: Invalid value: \"Main\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]],
    ['image required', { containers: [{ name: 'main' }] }, ['spec.containers[0].image: Required value']],
    ['names unique among containers', { containers: [main(), main()] }, ['spec.containers[1].name: Duplicate value: "main"']],
    ['names unique across init and regular containers', podSpec({ initContainers: [main()] }), ['spec.initContainers[0].name: Duplicate value: "main"']],
    ['restartPolicy only on init containers', podSpec({ containers: [main({ restartPolicy: 'Always' })] }), ['spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers']],
    ['init restartPolicy must be Always', podSpec({ initContainers: [{ name: 'init', image: 'x', restartPolicy: 'Never' }] }), ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"']],
    ['plain init containers may not have probes', podSpec({ initContainers: [{ name: 'init', image: 'x', readinessProbe: {} }] }), ['spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always']],
    ['sidecar init containers may have probes', podSpec({ initContainers: [{ name: 'init', image: 'x', restartPolicy: 'Always', readinessProbe: {} }] }), []],
    ['imagePullPolicy enum', { containers: [main({ imagePullPolicy: 'Sometimes' })] }, ['spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"']],
    ['terminationMessagePolicy enum', { containers: [main({ terminationMessagePolicy: 'Log' })] }, ['spec.containers[0].terminationMessagePolicy: Unsupported value: "Log": supported values: "File", "FallbackToLogsOnError"']],
  ];
  for (const [name, s, want] of cases) test(name, () => assert.deepEqual(check(s), want));
});

describe('validatePodSpec: ports and env', () => {
  const withPorts = (ports: unknown[]) => podSpec({ containers: [main({ ports })] });
  const withEnv = (env: unknown[]) => podSpec({ containers: [main({ env })] });
  const cases: [string, unknown, string[]][] = [
    ['a valid port', withPorts([{ name: 'http', containerPort: 80, protocol: 'TCP' }]), []],
    ['containerPort required', withPorts([{ name: 'http' }]), ['spec.containers[0].ports[0].containerPort: Required value']],
    ['containerPort range', withPorts([{ containerPort: 70000 }]), ['spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive']],
    ['hostPort range', withPorts([{ containerPort: 80, hostPort: -1 }]), ['spec.containers[0].ports[0].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive']],
    ['protocol enum', withPorts([{ containerPort: 80, protocol: 'HTTP' }]), ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"']],
    ['port names unique', withPorts([{ name: 'web', containerPort: 80 }, { name: 'web', containerPort: 81 }]), ['spec.containers[0].ports[1].name: Duplicate value: "web"']],
    ['port name syntax', withPorts([{ name: 'Web', containerPort: 80 }]), [
      'spec.containers[0].ports[0].name: Invalid value: "Web": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    ]],
    ['host ports may not collide', podSpec({ containers: [main({ ports: [{ containerPort: 80, hostPort: 8080 }] }), { name: 'b', image: 'x', ports: [{ containerPort: 81, hostPort: 8080 }] }] }),
      ['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"']],
    ['a valid env', withEnv([{ name: 'A', value: '1' }, { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]), []],
    ['env name required', withEnv([{ value: '1' }]), ['spec.containers[0].env[0].name: Required value']],
    ['env name syntax', withEnv([{ name: '1A' }]), [
      "spec.containers[0].env[0].name: Invalid value: \"1A\": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
    ]],
    ['valueFrom needs a source', withEnv([{ name: 'A', valueFrom: {} }]), ['spec.containers[0].env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`']],
    ['valueFrom excludes value', withEnv([{ name: 'A', value: 'x', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }]), ['spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty']],
    ['valueFrom: one source only', withEnv([{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' }, configMapKeyRef: { name: 'c', key: 'k' } } }]), ['spec.containers[0].env[0].valueFrom: Invalid value: "": may not have more than one field specified at a time']],
    ['secretKeyRef needs a key', withEnv([{ name: 'A', valueFrom: { secretKeyRef: { name: 's' } } }]), ['spec.containers[0].env[0].valueFrom.secretKeyRef.key: Required value']],
    ['fieldRef path must be supported', withEnv([{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'status.phase' } } }]), [
      'spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"',
    ]],
    ['fieldRef label subscript', withEnv([{ name: 'A', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } }]), []],
  ];
  for (const [name, s, want] of cases) test(name, () => assert.deepEqual(check(s), want));
});

describe('validatePodSpec: resources', () => {
  const withResources = (resources: unknown) => podSpec({ containers: [main({ resources })] });
  const cases: [string, unknown, string[]][] = [
    ['requests under limits', withResources({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } }), []],
    ['request above limit', withResources({ requests: { cpu: '2' }, limits: { cpu: '1' } }), ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1']],
    ['negative limit', withResources({ limits: { memory: '-1Gi' } }), ['spec.containers[0].resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0']],
    ['malformed quantity', withResources({ limits: { cpu: 'lots' } }), [`spec.containers[0].resources.limits[cpu]: Invalid value: "lots": ${QUANTITY_FORMAT_ERROR}`]],
    ['unknown unprefixed resource', withResources({ limits: { gpu: '1' } }), [
      'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
      'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers',
    ]],
    ['extended resources are integers', withResources({ limits: { 'example.com/gpu': '500m' }, requests: { 'example.com/gpu': '500m' } }), [
      'spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "500m": must be an integer',
      'spec.containers[0].resources.requests[example.com/gpu]: Invalid value: "500m": must be an integer',
    ]],
    ['extended resources need a limit', withResources({ requests: { 'example.com/gpu': '1' } }), ['spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources']],
    ['extended resources: request equals limit', withResources({ requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '2' } }), ['spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2']],
    ['hugepages need cpu or memory', withResources({ limits: { 'hugepages-2Mi': '2Mi' }, requests: { 'hugepages-2Mi': '2Mi' } }), ['spec.containers[0].resources: Forbidden: HugePages require cpu or memory']],
  ];
  for (const [name, s, want] of cases) test(name, () => assert.deepEqual(check(s), want));

  test('any request ≤ limit pair in millicores is accepted, any pair above is rejected', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 10_000 }), (req, lim) => {
        const errors = validatePodSpec(withResources({ requests: { cpu: `${req}m` }, limits: { cpu: `${lim}m` } }), spec);
        assert.equal(errors.length === 0, req <= lim);
      }),
    );
  });
});

describe('validatePodSpec: volumes and mounts (user-issues #11)', () => {
  const cases: [string, unknown, string[]][] = [
    ['a mount of an existing volume', podSpec({ volumes: [{ name: 'data', emptyDir: {} }], containers: [main({ volumeMounts: [{ name: 'data', mountPath: '/data' }] })] }), []],
    ['a mount of a missing volume', podSpec({ containers: [main({ volumeMounts: [{ name: 'data', mountPath: '/data' }] })] }), ['spec.containers[0].volumeMounts[0].name: Not found: "data"']],
    ['mount paths unique', podSpec({ volumes: [{ name: 'a', emptyDir: {} }, { name: 'b', emptyDir: {} }], containers: [main({ volumeMounts: [{ name: 'a', mountPath: '/x' }, { name: 'b', mountPath: '/x' }] })] }),
      ['spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/x": must be unique']],
    ['mountPath required', podSpec({ volumes: [{ name: 'a', emptyDir: {} }], containers: [main({ volumeMounts: [{ name: 'a' }] })] }), ['spec.containers[0].volumeMounts[0].mountPath: Required value']],
    ['subPath may not climb (reported on the list path, as upstream)', podSpec({ volumes: [{ name: 'a', emptyDir: {} }], containers: [main({ volumeMounts: [{ name: 'a', mountPath: '/x', subPath: '../etc' }] })] }),
      ['spec.containers[0].volumeMounts.subPath: Invalid value: "../etc": must not contain \'..\'']],
    ['volume names unique', podSpec({ volumes: [{ name: 'a', emptyDir: {} }, { name: 'a', emptyDir: {} }] }), ['spec.volumes[1].name: Duplicate value: "a"']],
    ['volume name syntax', podSpec({ volumes: [{ name: 'A', emptyDir: {} }] }), [
      "spec.volumes[0].name: Invalid value: \"A\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]],
    ['a volume needs a source', podSpec({ volumes: [{ name: 'a' }] }), ['spec.volumes[0]: Required value: must specify a volume type']],
    ['a volume has one source only', podSpec({ volumes: [{ name: 'a', emptyDir: {}, configMap: { name: 'c' } }] }), ['spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type']],
    ['a PVC volume needs its claim name', podSpec({ volumes: [{ name: 'a', persistentVolumeClaim: {} }] }), ['spec.volumes[0].persistentVolumeClaim.claimName: Required value']],
    ['a broken volume cannot be mounted', podSpec({ volumes: [{ name: 'a' }], containers: [main({ volumeMounts: [{ name: 'a', mountPath: '/a' }] })] }),
      ['spec.volumes[0]: Required value: must specify a volume type', 'spec.containers[0].volumeMounts[0].name: Not found: "a"']],
  ];
  for (const [name, s, want] of cases) test(name, () => assert.deepEqual(check(s), want));
});

describe('validatePodSpec: pod-level fields', () => {
  const cases: [string, unknown, string[]][] = [
    ['restartPolicy enum', podSpec({ restartPolicy: 'Sometimes' }), ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']],
    ['dnsPolicy enum', podSpec({ dnsPolicy: 'Custom' }), ['spec.dnsPolicy: Unsupported value: "Custom": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"']],
    ['nodeSelector labels', podSpec({ nodeSelector: { zone: 'a b' } }), [
      "spec.nodeSelector: Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]],
    ['node affinity terms', podSpec({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'In' }] }] } } } }),
      ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"]],
    ['preferred node affinity weight', podSpec({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, preference: {} }] } } }),
      ['spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100']],
    ['tolerations', podSpec({ tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] }), ['spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'']],
    ['priorityClassName is a DNS subdomain', podSpec({ priorityClassName: 'High_Priority' }), [
      "spec.priorityClassName: Invalid value: \"High_Priority\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]],
    ['terminationGracePeriodSeconds ≥ 0', podSpec({ terminationGracePeriodSeconds: -1 }), ['spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0']],
    ['activeDeadlineSeconds ≥ 1', podSpec({ activeDeadlineSeconds: 0 }), ['spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive']],
    ['hostname is a DNS label', podSpec({ hostname: 'a.b' }), ['spec.hostname: Invalid value: "a.b": must not contain dots']],
    ['garbage does not crash', 'not a spec', ['spec.containers: Required value']],
    ['garbage inside does not crash', { containers: [null, 1, 'x'], volumes: 'v', tolerations: {} }, [
      'spec.containers[0].name: Required value', 'spec.containers[0].image: Required value',
      'spec.containers[1].name: Required value', 'spec.containers[1].image: Required value', 'spec.containers[1].name: Duplicate value: ""',
      'spec.containers[2].name: Required value', 'spec.containers[2].image: Required value', 'spec.containers[2].name: Duplicate value: ""',
    ]],
  ];
  for (const [name, s, want] of cases) test(name, () => assert.deepEqual(check(s), want));
});

describe('validatePodTemplateSpec', () => {
  const p = root('spec', 'subsets').index(0).child('patch');
  test('labels and annotations are reported on the template path; the spec under .spec', () => {
    const template = { metadata: { labels: { 'a b': 'x' }, annotations: { 'controller.kubernetes.io/pod-deletion-cost': '+5' } }, spec: { containers: [] } };
    assert.deepEqual(texts(validatePodTemplateSpec(template, p)), [
      "spec.subsets[0].patch.labels: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      'spec.subsets[0].patch.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "+5": must be a 32bit integer',
      'spec.subsets[0].patch.spec.containers: Required value',
    ]);
  });
  test('valid deletion costs', () => {
    for (const cost of ['0', '-100', '2147483647', '-05']) {
      assert.deepEqual(validatePodTemplateSpec({ metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': cost } }, spec: podSpec() }, p), [], cost);
    }
  });
  test('ephemeral containers are not allowed in templates', () => {
    assert.deepEqual(texts(validatePodTemplateSpec({ spec: podSpec({ ephemeralContainers: [{ name: 'debug' }] }) }, p)), [
      'spec.subsets[0].patch.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template',
    ]);
  });
});

describe('podTemplateDecodeError (json.Unmarshal into PodTemplateSpec)', () => {
  const cases: [string, unknown, string | undefined][] = [
    ['a valid template', { metadata: { labels: { a: 'b' } }, spec: podSpec() }, undefined],
    ['nulls are fine', { metadata: null, spec: { containers: null } }, undefined],
    ['unknown fields are fine', { spec: { containers: [main({ whatever: 1 })] }, extra: true }, undefined],
    ['containers must be a list', { spec: { containers: 'x' } }, 'json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container'],
    ['a container name must be a string', { spec: { containers: [{ name: 5 }] } }, 'json: cannot unmarshal number into Go struct field Container.spec.containers.name of type string'],
    ['labels must be strings', { metadata: { labels: { a: 1 } } }, 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string'],
    ['a port must be an integer', { spec: { containers: [main({ ports: [{ containerPort: 80.5 }] })] } }, 'json: cannot unmarshal number 80.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32'],
    ['quantities must parse', { spec: { containers: [main({ resources: { limits: { cpu: 'abc' } } })] } }, QUANTITY_FORMAT_ERROR],
    ['numbers are quantities too', { spec: { containers: [main({ resources: { limits: { cpu: 2 } } })] } }, undefined],
    ['the template itself must be an object', 'x', 'json: cannot unmarshal string into Go value of type v1.PodTemplateSpec'],
  ];
  for (const [name, template, want] of cases) test(name, () => assert.equal(podTemplateDecodeError(template), want));
});
