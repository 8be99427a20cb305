/** Part 1 of the example scenarios under race seeds: testing/race-examples.ts. */
import { raceExampleTests } from './testing/race-examples.ts';

raceExampleTests(0);
