// An address svc writes for one recipient of one email and recognizes when mail comes back to it:
// `<prefix>+<email id, 32 hex digits>-<tag>@bounces.<from domain>`, the tag the first `tagHex` hex
// digits of HMAC-SHA256(key, "<input><email id>|<recipient>"). The return path (delivery/) and the
// unsubscribe mailto (tracking/) are such addresses, each with its own prefix, input and key.
import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from './hmac.ts';
import { uuidOf } from './ids.ts';

/** A tagged address taken apart (its syntax only): the email id, the tag, and the sending domain. */
export interface TaggedAddress {
  emailId: string;
  tag: string;
  fromDomain: string;
}

export function taggedAddresses(prefix: string, tagHex: number, input = '') {
  const local = new RegExp(`^${prefix}\\+([0-9a-f]{32})-([0-9a-f]{${tagHex}})$`);
  const compact = (emailId: string) => emailId.replaceAll('-', '').toLowerCase();
  const tagOf = (key: Buffer, id: string, recipient: string) =>
    hmacSha256(key, `${input}${id}|${recipient.toLowerCase()}`).toString('hex').slice(0, tagHex);

  return {
    /** The address of one recipient of an email. */
    write: (key: Buffer, emailId: string, recipient: string, fromDomain: string): string => {
      const id = compact(emailId);
      return `${prefix}+${id}-${tagOf(key, id, recipient)}@bounces.${fromDomain.toLowerCase()}`;
    },
    parse: (address: string): TaggedAddress | null => {
      const at = address.lastIndexOf('@');
      const m = at < 0 ? null : local.exec(address.slice(0, at).toLowerCase());
      const host = address.slice(at + 1).toLowerCase();
      if (!m || !host.startsWith('bounces.')) return null;
      return { emailId: uuidOf(m[1]!), tag: m[2]!, fromDomain: host.slice('bounces.'.length) };
    },
    /** True when the address's tag was made by `key` for `recipient`, compared in constant time. */
    covers: (key: Buffer, a: TaggedAddress, recipient: string): boolean => {
      const want = Buffer.from(tagOf(key, compact(a.emailId), recipient));
      const got = Buffer.from(a.tag);
      return want.length === got.length && timingSafeEqual(want, got);
    },
  };
}
