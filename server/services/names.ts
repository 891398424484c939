/** Readable names for devices created without one ("quiet-otter"), unique per user. */
import { randomInt } from 'node:crypto';

const ADJECTIVES = [
  'amber',
  'brave',
  'calm',
  'clever',
  'crisp',
  'eager',
  'fancy',
  'gentle',
  'happy',
  'jolly',
  'keen',
  'lively',
  'lucky',
  'merry',
  'nimble',
  'noble',
  'polite',
  'proud',
  'quick',
  'quiet',
  'rapid',
  'shiny',
  'silent',
  'sunny',
  'swift',
  'tidy',
  'vivid',
  'warm',
  'wise',
  'witty',
  'young',
  'zesty',
];
const NOUNS = [
  'badger',
  'beacon',
  'cedar',
  'comet',
  'falcon',
  'fern',
  'harbor',
  'heron',
  'island',
  'lantern',
  'maple',
  'meadow',
  'otter',
  'panda',
  'pebble',
  'pine',
  'quartz',
  'raven',
  'river',
  'robin',
  'sparrow',
  'spruce',
  'summit',
  'thunder',
  'tiger',
  'valley',
  'willow',
  'wolf',
  'yak',
  'zebra',
  'canyon',
  'glacier',
];

function pick(list: readonly string[]): string {
  return list[randomInt(list.length)]!;
}

/** A name `taken` says is free: adjective-noun, with a number added when the pair is taken. */
export async function generateDeviceName(taken: (name: string) => Promise<boolean>): Promise<string> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const name = `${pick(ADJECTIVES)}-${pick(NOUNS)}`;
    if (!(await taken(name))) return name;
  }
  for (;;) {
    const name = `${pick(ADJECTIVES)}-${pick(NOUNS)}-${randomInt(1000, 1_000_000)}`;
    if (!(await taken(name))) return name;
  }
}
