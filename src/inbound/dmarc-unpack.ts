import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { Unzip, UnzipInflate } from 'fflate';

/** A report attachment larger than this is refused before anything is decompressed. */
export const REPORT_MAX_COMPRESSED_BYTES = 5 * 1024 * 1024;
/** The XML of one report may be this large; decompression stops here (a zip bomb never gets further). */
export const REPORT_MAX_XML_BYTES = 16 * 1024 * 1024;

const gunzipAsync = promisify(gunzip);

/** Why an attachment could not be unpacked, said to the reporter and logged. */
export class UnpackError extends Error {}

export type ReportEncoding = 'gzip' | 'zip' | 'xml';

/** Throws UnpackError past the caps, on a truncated or corrupt archive, or an archive with no XML file. */
export async function unpackReport(data: Buffer, encoding: ReportEncoding): Promise<Buffer> {
  if (data.length > REPORT_MAX_COMPRESSED_BYTES) {
    throw new UnpackError(`the report attachment is ${data.length} bytes, over ${REPORT_MAX_COMPRESSED_BYTES}`);
  }
  if (encoding === 'xml') {
    if (data.length > REPORT_MAX_XML_BYTES) throw tooLarge();
    return data;
  }
  if (encoding === 'gzip') return gunzipCapped(data);
  return unzipCapped(data);
}

const tooLarge = () =>
  new UnpackError(`the report's XML is more than ${REPORT_MAX_XML_BYTES} bytes (a zip bomb?): refused`);

async function gunzipCapped(data: Buffer): Promise<Buffer> {
  try {
    // zlib stops inflating at maxOutputLength and fails: the rest of a bomb is never produced.
    return await gunzipAsync(data, { maxOutputLength: REPORT_MAX_XML_BYTES });
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
    throw new UnpackError(`the gzip attachment is truncated or corrupt (${(e as Error).message})`);
  }
}

/**
 * Compressed bytes handed to the inflater at a time: deflate expands at most ~1032:1, so
 * one step makes at most ~1 MiB before the cap is checked again.
 */
const ZIP_STEP = 1024;

/** The first .xml entry of a zip, inflated step by step up to the cap. */
function unzipCapped(data: Buffer): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let done = false;
  let failure: UnpackError | undefined;
  const unzip = new Unzip();
  unzip.register(UnzipInflate);
  let chosen = false;
  unzip.onfile = (file) => {
    if (chosen || !file.name.toLowerCase().endsWith('.xml')) return;
    chosen = true;
    file.ondata = (err, chunk, final) => {
      if (failure || done) return;
      if (err) return void (failure = new UnpackError(`the zip attachment is corrupt (${err.message})`));
      size += chunk.length;
      if (size > REPORT_MAX_XML_BYTES) {
        file.terminate();
        return void (failure = tooLarge());
      }
      chunks.push(chunk);
      done = final;
    };
    file.start();
  };
  try {
    for (let at = 0; at < data.length && !failure && !done; at += ZIP_STEP) {
      unzip.push(data.subarray(at, at + ZIP_STEP), at + ZIP_STEP >= data.length);
    }
  } catch (e) {
    failure ??= new UnpackError(`the zip attachment is corrupt (${(e as Error).message})`);
  }
  if (failure) return Promise.reject(failure);
  if (!chosen) return Promise.reject(new UnpackError('the zip attachment holds no .xml file'));
  if (!done) return Promise.reject(new UnpackError('the zip attachment is truncated'));
  return Promise.resolve(Buffer.concat(chunks));
}
