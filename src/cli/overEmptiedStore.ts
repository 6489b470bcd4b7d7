import type { VersionedStore } from "../io/stores/versionedJson.js";

/**
 * What a command says on stderr when it wrote into a store file that had been emptied in place (`jq … file >
 * file`): it does not refuse, since the records were lost when the file was emptied, not by its write, and
 * refusing would not bring them back; but the one record it wrote is all the file holds now.
 */
export function overEmptiedNote(path: string, records: string): string {
  return `Note: ${path} was empty, emptied after svc last wrote it (as jq … file > file leaves it): the ${records} it held before are not in it — only what this command wrote is; put them back from a backup\n`;
}

/** `store`, whose writes say overEmptiedNote when they wrote into an emptied file. */
export function notingOverEmptied<T>(store: VersionedStore<T>, records: string): VersionedStore<T> {
  return {
    path: store.path,
    read: () => store.read(),
    revision: () => store.revision(),
    async update(change, expectedRevision) {
      const written = await store.update(change, expectedRevision);
      if (written.overEmptied === true) process.stderr.write(overEmptiedNote(store.path, records));
      return written;
    },
  };
}
