import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Taint, Toleration } from '../../k8s/types.ts';
import { evictionTime } from './node-lifecycle.ts';

const NOW = Date.UTC(2026, 0, 1);
const podWith = (tolerations: Toleration[]): Pod => ({ metadata: { name: 'p' }, spec: { containers: [], tolerations } });

describe('evictionTime (the taint-eviction rules)', () => {
  const added = '2026-01-01T00:00:00Z';
  const cases: { name: string; taints: Taint[]; tolerations: Toleration[]; want: 'now' | number | undefined }[] = [
    { name: 'no NoExecute taint: never', taints: [{ key: 'a', effect: 'NoSchedule' }], tolerations: [], want: undefined },
    { name: 'an untolerated NoExecute taint: now', taints: [{ key: 'a', effect: 'NoExecute' }], tolerations: [], want: 'now' },
    { name: 'tolerated without tolerationSeconds: never', taints: [{ key: 'a', effect: 'NoExecute' }], tolerations: [{ key: 'a', operator: 'Exists' }], want: undefined },
    { name: 'tolerated for 30 s from timeAdded', taints: [{ key: 'a', effect: 'NoExecute', timeAdded: added }], tolerations: [{ key: 'a', operator: 'Exists', tolerationSeconds: 30 }], want: NOW + 30_000 },
    {
      name: 'the shortest tolerationSeconds over all taints wins',
      taints: [{ key: 'a', effect: 'NoExecute', timeAdded: added }, { key: 'b', effect: 'NoExecute', timeAdded: added }],
      tolerations: [{ key: 'a', operator: 'Exists', tolerationSeconds: 300 }, { key: 'b', operator: 'Exists', tolerationSeconds: 20 }],
      want: NOW + 20_000,
    },
    {
      name: 'one untolerated taint among tolerated ones: now',
      taints: [{ key: 'a', effect: 'NoExecute' }, { key: 'b', effect: 'NoExecute' }],
      tolerations: [{ key: 'a', operator: 'Exists', tolerationSeconds: 300 }],
      want: 'now',
    },
    { name: 'negative tolerationSeconds counts as 0', taints: [{ key: 'a', effect: 'NoExecute', timeAdded: added }], tolerations: [{ key: 'a', operator: 'Exists', tolerationSeconds: -5 }], want: NOW },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(evictionTime(podWith(c.tolerations), c.taints, NOW), c.want));
});
