// The data behind classify.ts: what an SMTP reply is about, read from its text first, then its
// enhanced status code (RFC 3463), then its basic code (RFC 5321), as decisions.md asks
// ("servers often send misleading codes"). The first matching text rule wins, so the order is the
// policy: rules about our sending IP, our authentication and our sender address come before the
// rules about the recipient, because "550 5.1.1 ... blocked using zen.spamhaus.org" must never
// put the recipient on the suppression list.
// `(?:[^.;]|\.(?=\w)){0,n}` below means "within n characters of the same sentence": the dot in an
// address, a domain or an IP does not end a sentence.
import type { BounceCategory } from './classify.ts';
import {
  DEAD_RECIPIENT,
  DISABLED_RECIPIENT,
  FULL_MAILBOX,
  GREY_LIST,
  INVALID_RECIPIENT,
  POLICY_WORDS,
  IP_BLOCKED,
  SPAM_WORDS,
  TOO_LARGE,
  TOO_MANY,
} from './classify-languages.ts';

export interface Rule {
  category: BounceCategory;
  /** The reply says the address itself is dead: with a 5xx code this is a hard, suppressing bounce. */
  dead?: boolean;
  /** A more precise sentence than the category's entry in REASONS. */
  reason?: string;
}

export interface TextRule extends Rule {
  match: RegExp;
}

export const DOMAIN_DEAD = "the recipient's domain does not exist";
export const DOMAIN_NO_MAIL = "the recipient's domain publishes a null MX: it accepts no mail";
export const SENDER_REFUSED = "the recipient's server refused our sender address or greeting, not the recipient";
export const MAILBOX_DISABLED = "the recipient's server says the mailbox is disabled";
export const SENDER_DOMAIN_UNRESOLVED = "the recipient's server could not resolve our sender address's domain";

/**
 * A text that gives no reason at all (decisions.md: "transaction failed", "rejected"): the
 * whole text is one of these. Only a specific enhanced code can then say more (classify.ts).
 */
export const NO_REASON =
  /^(?:requested action not taken:? )?(?:the |your )?(?:message|mail|e-?mail)?\s*(?:was |has been )?(?:rejected|refused|blocked|denied|not accepted)\.?$|^transaction failed\.?$/i;

export const TEXT_RULES: readonly TextRule[] = [
  // Sender verification named as such is the receiver's policy (decisions.md lists it there),
  // whatever the reply guesses of the cause ("they may be blacklisted").
  { match: /sender verif\w* failed|verification failed for/i, category: 'policy-rejection', reason: SENDER_REFUSED },
  // Yahoo's "[TSS04] ... temporarily deferred due to unexpected volume or user complaints": a
  // rate limit (decisions.md names the phrase), although its code is one of Yahoo's IP codes.
  { match: /unexpected volume/i, category: 'rate-limited' },
  // Our sending IP or domain is block-listed or has a poor reputation (Spamhaus, Barracuda, Outlook
  // S3150, Yahoo TSS04/TSS09, Proofpoint RULE3_x, Gmail's "unusual rate ... from your IP").
  {
    match:
      /\b(?:spamhaus|barracuda\w*|spamcop|sorbs|surbl|uribl|invaluement|abuseat|mailspike|dnsbls?|rbl\w*)\b|mail-abuse\.com|ipcheck\.proofpoint|black ?hole|\(BL\)|(?<![A-Z])HL:(?:IPB|REP|IHU)\b/i,
    category: 'reputation-blocklist',
  },
  {
    match:
      /(?<!\b(?:recipient|user|personal|tenant allow)['’]?s? )\b(?:block|black|deny)[ -]?list|(?<!not )\blisted (?:at|in|on|by) (?!(?:the |our )?(?:public )?(?:directory|name|address book))|blocked using|\b(?:is|are|was|been|being|currently) (?:black|block)?listed\b/i,
    category: 'reputation-blocklist',
  },
  {
    match: /reputation|sender ?score|\[TSS?\d{2}\]|\(S\d{3,4}\)|\bRULE3_\d\b|banned send(?:er|ing)/i,
    category: 'reputation-blocklist',
  },
  {
    match:
      /\b(?:your|the|this|sending|client|source) ip(?: address)?\b(?:[^.;]|\.(?=\w)){0,80}\b(?:block|ban|reject|refus|deni|filter|identified as spam|not (?:allowed|authori[sz]ed|accepted|permitted)|poor|bad|low|listed)|adresse ip source bloquee|indirizzo ip bloccato|ip-adresse (?:ist )?(?:gesperrt|blockiert)|\bbad ip\b|\bclient host\b(?:[^.;]|\.(?=\w)){0,40}\bspam|unusual (?:rate|amount) of unsolicited|(?:not accepted|refused|blocked|rejected) from (?:this|your|the sending) ip\b|\b(?:block|ban)\w*(?:[^.;]|\.(?=\w)){0,40}\b(?:your|this|the sending) ip\b|\b\d{1,3}(?:\.\d{1,3}){3}\b>?\]?(?:[^.;]|\.(?=\w)){0,30}\b(?:is |has been |was )?(?:blocked|blacklisted|banned)\b|spam sender|blocked from sending|number of (?:invalid|unknown|non-?existent|bad) (?:recipients|users|addresses)|\bblack ip\b|excessive unknown recipients|too many (?:unknown|invalid) recipients/i,
    category: 'reputation-blocklist',
  },
  // The same in the languages receivers answer in: our IP blocked, or a black list named.
  { match: IP_BLOCKED, category: 'reputation-blocklist' },
  // A TLS the receiver requires (or our message requires, REQUIRETLS) is policy, even when the
  // reply says "unauthenticated" of the connection.
  {
    match:
      /\bsmtputf8\b(?:[^.;]){0,30}\brequired\b|requires? smtputf8|requiretls|\btls\b(?:[^.;]){0,40}\brequired\b|(?:does ?n[o']t|not) (?:support|offer) (?:star)?tls/i,
    category: 'policy-rejection',
  },
  // SPF, DKIM, DMARC, or SMTP AUTH at a smarthost.
  {
    match:
      /\b(?:dmarc|dkim|spf)\b|sender policy framework|authenticat|spoof|domain owner policy|authori[sz]ation required|not logged in|must (?:be )?(?:authenticated|logged in)|\bauth failed\b|mismatches client ip|invalid ip for sending mail of domain/i,
    category: 'auth-failure',
  },
  // Required TLS and the reverse DNS of our IP are the receiver's policy, not authentication
  // (decisions.md: "A missing PTR or reverse DNS is not this: it is policy").
  {
    match:
      /starttls|\btls (?:is )?required|encryption (?:is )?required|over a tls connection|reverse (?:dns|hostname|lookup)|\bptr\b|\bnoptr\b|\brdns\b|cannot find your (?:reverse )?hostname/i,
    category: 'policy-rejection',
  },
  // Header syntax (RFC 5322) is the receiver's rule, even when it says it fights spam with it.
  {
    match:
      /rfc ?(?:5322|2822)|\bheader error\b|invalid headers?\b|(?:\bno|missing(?: an?)?(?: required)?)(?: [\w-]+)? headers?\b|malformed message|bare (?:newlines?|lf|cr)\b|(?:subject|header)s? contains? invalid|invalid characters? in (?:the )?(?:subject|header)|(?:bare|lone) (?:cr|lf)\b|duplicated? message-id|\bno [\w-]+ field given|missing (?:required )?[\w-]+ header|not (?:rfc|standards?)[ -]?compliant|duplicate headers?|invalid sender|emetteur invalide|malformed address|bad address syntax|address syntax|domain name required|address must include|fully[- ]qualified address|address must contain|duplicate message\b|invalid (?:[\w-]+ )?headers?\b/i,
    category: 'policy-rejection',
  },
  // Our sender's domain does not resolve (4.1.8/5.1.8): a DNS failure on our side, never the recipient's.
  {
    match:
      /(?:unroutable|unresolvable) sender|sender address rejected: malformed dns|bad sender'?s system address|(?:from:? ?)?domain must resolve|(?:sender (?:address|domain)|domain of sender)(?:[^;]){0,80}?(?:domain not found|does ?n[o']t (?:exist|resolve)|not resolv|unresolvable|nxdomain)/i,
    category: 'dns-mx-failure',
    reason: SENDER_DOMAIN_UNRESOLVED,
  },
  {
    match:
      /rate[- ]?limit|(?:too|to) many (?:concurrent |simultaneous |parallel |smtp |recent |(?!unrecognized|unknown|invalid|bad)[\w-]+ ){0,2}(?:connections|messages|recipients|rcpt|mails?|e-?mails|requests|sessions|commands|deliveries)(?! (?:on the server|stored))|rate that prevents|throttl|\(AS8\d\d\)|sending (?:rate|limit|quota)|send limit|excessive amounts? of data|(?:too|to) fast|slow down|mail flood|frequen(?:cy|tly)\b|thread limit|receiving too much|too much (?:e-?)?mail(?! data| stored)|too quickly|excessive (?:volume|traffic|mail)|max(?:imum)? (?:number of )?messages? per (?:connection|session)|exceeded (?:the |its )?threshold|(?<![A-Z])(?:HL:I(?:CC|FC|FQ)|MI:(?:DMC|SFQ)|RP:(?:CEL|QRC|TRC|RCL|QCL))\b|(?<!mailbox )exceeded(?:(?!size|length|disk|storage|space|mailbox)(?:[^.;]|\.(?=\w))){0,30}(?:rate|limit)|recipients per (?:\d+ )?(?:second|minute|hour|day)|per (?:hour|day|minute) (?:exceeded|allowed)|(?:daily|hourly|relay|queue) quota|(?:rcpts?|recipients)(?:[^.;]){0,30}maximum threshold|max defers|(?:connection|concurrency|session) limit|\brcpts?\b(?:[^.;]){0,25}\b(?:over|exceed\w*|limit)\b|(?:number|count) of rcpts?\b|out of allow\w* rcpt|max(?:imum)? (?:concurrent )?connections|(?:attempts|messages|connections) per (?:hour|day|minute)/i,
    category: 'rate-limited',
  },
  { match: TOO_MANY, category: 'rate-limited' },
  {
    match:
      /gr[ae]y[ -]?list|postgrey|first[- ]time sender|tempfail\w* as anti-?spam|\[GL\d\d\]|mimecast\W.*internal resource|internal resource.*mimecast/i,
    category: 'greylisting',
  },
  { match: GREY_LIST, category: 'greylisting' },
  // A connection that failed, named as such, even when the HELO or a refusal is mentioned.
  {
    match:
      /connection (?:timed out|refused|reset|lost|dropped)|(?:closed|dropped|reset) (?:the )?connection|lost connection|\btls\b(?:[^.;]){0,20}\b(?:negotiation|handshake)|handshake fail|cannot start tls|no connection could be established|network (?:is )?unreachable|(?:unable|failed) to read (?:the )?(?:banner|greeting)|(?:did not|didn't|does not|doesn't) respond|(?:failure|unable|failed) to reach|\bhosts?\b(?:[^.;]){0,40}\b(?:have|has) been failing|shutting down|refused to talk to me|too many (?:unrecognized|unknown|invalid|bad) commands|connection (?:\S+ ){0,3}(?:is |was )?broken|too many errors|network error|host (?:is )?(?:not |un)reachable|attempts? to connect|socket error|tcp (?:read|write) error|hosts have been failing/i,
    category: 'connection-error',
  },
  // NetEase's published codes for a refused sender or too many erroneous commands.
  { match: /(?<![A-Z])(?:MI:CEL|WM:BL[UI])\b/, category: 'policy-rejection' },
  // About our envelope sender or HELO, even when the server words it like a dead address
  // ("Sender address rejected: Domain not found", Exim's "Verification failed for <sender>").
  {
    match:
      /\bsenders?\b|verification failed for|domain of sender|envelope[- ]sender|return[- ]path|return address|\bmail from\b(?! \[?\d{1,3}(?:\.\d{1,3}){3})|\bfrom:? (?:address|domain)\b|\b(?:helo|ehlo)\b/i,
    category: 'policy-rejection',
    reason: SENDER_REFUSED,
  },
  // A full mailbox comes before a dead one (design/decisions.md's order): "unknown address error … Mailbox Full".
  {
    match:
      /(?:mailbox|inbox|mail ?box|mail ?folder|user|recipient|account)\b(?:[^.;]|\.(?=\w)){0,40}\b(?:is )?(?:full|over ?quota)\b|over ?quota|(?<!sending |relay |daily |queue )quota (?:usage )?(?:exceeded|exceed|full)|(?:disk|storage|mailbox) quota|exceed(?:s|ed|ing)? (?:(?:the|its|his|her|their|storage|mailbox|disk) )*(?:quota|storage)|out of (?:storage|space)|(?:insufficient|not (?:have )?enough|n.t have enough) (?:mailbox )?(?:storage|space)|exhausted (?:\w+ ){0,2}storage|storage space|storage allocation|mailbox size limit|quota violation|full mailbox|mailbox exceeds (?:the |its )?(?:allowed |maximum )?size|(?:maximum|allocated) mailbox (?:size|storage)|messages in (?:the )?recipient.s mailbox exceeded|\bquota error\b|disk space quota|メールボックスが一杯|空间不足|переполнен|disk ?space quota|too (?:many messages|much mail) (?:on the server|stored)|speichervolumen|speicherplatz|(?:mailbox|casilla)(?:[^.;]){0,20}(?:lleno|agotado)|espacio en casilla|boîte (?:aux lettres )?pleine|mailbox size (?:exceed|limit)/i,
    category: 'mailbox-full',
  },
  { match: FULL_MAILBOX, category: 'mailbox-full' },
  // Postfix's "Name service error for name=mx.example type=A: Host not found": the domain has
  // an MX whose host does not resolve, so the domain itself is not dead.
  { match: /name service error for name=\S+ type=(?:A|AAAA)\b/i, category: 'dns-mx-failure' },
  // The address is dead: the domain does not exist or has a null MX (RFC 7505), or the mailbox
  // does not exist or is disabled.
  {
    match:
      /domain (?:name )?(?:does not|doesn't|did not) exist|no such domain|non-?existent domain|(?:host|domain)(?: name)? (?:not found|unknown)|unknown (?:host|domain)|\bnxdomain\b/i,
    category: 'dns-mx-failure',
    dead: true,
    reason: DOMAIN_DEAD,
  },
  // A domain that says it takes no mail (null MX, RFC 7505): decisions.md puts it with invalid-recipient.
  {
    match: /null ?mx|(?:domain|host) (?:does not|doesn't) accept (?:e-?)?mail/i,
    category: 'invalid-recipient',
    dead: true,
    reason: DOMAIN_NO_MAIL,
  },
  {
    match:
      /(?:user|recipient|addressee) (?:unknown|not known)|unknown (?:user|recipient|mailbox|local[- ]?part|e-?mail address|address(?:ee)?)|no such (?:user|mailbox|recipient|address|account|person|local user)|recipient ?not ?found|(?:user|mailbox|account)(?:[^.;]|\.(?=\w)){0,40}\b(?:not found|is unknown)|invalid[- ](?:recipient|mailbox|user|final delivery)|not a valid (?:user|mailbox|recipient)|no mailbox here|bad destination mailbox|all recipients (?:are |were )?invalid|no valid recipients|no such (?:\w+ )?(?:user|mailbox|recipient|address|account)|(?:unknown|illegal|invalid) (?:or \w+ )?alias|(?:user|recipient|mailbox|address|e-?mail) (?:does )?not exists?\b|non-?existent (?:e-?mail )?(?:address|user|mailbox|recipient|account)|not (?:in|on) (?:the )?(?:recipient|user|valid recipient) list|not listed in (?:the )?(?:public )?(?:name (?:&|and) address book|directory)|not a member of (?:the )?domain|(?:address|recipient) (?:is )?marked as invalid|final (?:e-?mail )?delivery point|\bnot our user\b|no (?:such )?mailbox (?:here )?by that name|not a valid (?:rfc[- ]?5321 )?address|ディレクトリのリストにありません/i,
    category: 'invalid-recipient',
    dead: true,
  },
  {
    // Gmail "The email account that you tried to reach does not exist", Yahoo "dd This user doesn't
    // have a yahoo.com account", Outlook's directory-based edge blocking AS(201806281).
    match:
      /(?<!(?:your|ip|sender|sending) )\b(?:user|mailbox|recipient|address|account)\b(?:[^.;]|\.(?=\w)){0,40}(?:does not|doesn't|did not|no longer) exists?|doesn't have an? [\w.-]+ account|\bdd this user|AS\(201806281\)/i,
    category: 'invalid-recipient',
    dead: true,
  },
  {
    match:
      /(?<!(?:your|ip|sender|sending) )\b(?:user|mailbox|account|recipient|address)\b(?:[^.;]|\.(?=\w)){0,40}\b(?:disabled|deactivated|inactive|inactivated|closed|terminated|deleted|removed|suspended|expired|locked|frozen|blocked|bloque|not activated|no longer (?:valid|active|in use|accepts? (?:e-?)?mail))\b|(?:disabled|inactive|suspended|closed|expired|frozen|invalid) (?:recipient|user|mailbox|account)|blocked due to inactivity|@[\w.-]+>? (?:is |was )?no longer (?:valid|active|in use)/i,
    category: 'invalid-recipient',
    dead: true,
    reason: MAILBOX_DISABLED,
  },
  // The pairs of classify-languages.ts: a recipient noun and a denial of its existence, in
  // either order, within one clause, in 20-odd languages.
  { match: DEAD_RECIPIENT, category: 'invalid-recipient', dead: true },
  { match: DISABLED_RECIPIENT, category: 'invalid-recipient', dead: true, reason: MAILBOX_DISABLED },
  // "Invalid" may be the address's syntax, not its existence: refused, but soft and kept.
  { match: INVALID_RECIPIENT, category: 'invalid-recipient' },
  // The general shape of a dead address: the recipient (its address, mailbox, user, account)
  // as the subject of a denial of existence or validity, within one clause ("Recipient
  // <a@b> not found in the directory", "the address you sent to is not valid"). Weaker than
  // the phrases above; our sender, our IP and our account are never its subject.
  {
    match:
      /(?<!(?:\bip|\bsender|\bsending|\byour|\bfrom|\breturn|\breply-to|\byour e-?mail|\bsender e-?mail|\bfrom e-?mail)[ -])\b(?:recipient|addressee|mailbox|e-?mail addr?ess|addr?ess|user(?:name)?|account|local[- ]?part|destination address)\b(?:[^.;:,(]|\.(?=\w)){0,50}?\b(?:(?:is|was|does|do) not (?:exist|valid|known|found|registered|recogni[sz]ed|listed)|(?:wasn.t|isn.t) (?:found|valid|known)|unknown|not (?:found|known|valid|registered|recogni[sz]ed|listed|present|existing)|(?:doesn.t|does not|did not|no longer) exists?|non-?existent|unrecogni[sz]ed|unregistered|(?:could|can)(?:n.t| ?not) be (?:found|located))\b/i,
    category: 'invalid-recipient',
    dead: true,
  },
  {
    match:
      /unable to route|unroute?able|cannot resolve|find a mail exchanger|(?:can|could)(?:not|n't| not) be resolved|dns resolve|host map: lookup|too many cname|cname (?:loop|chain)|no (?:valid )?(?:mx|mail hosts?)\b|mx (?:lookup|record)|dns (?:\w+ )?(?:error|failure|look-?up|problem|query)|failure in dns|name (?:service|server) error|could not resolve|unresolvable|invalid dns\b|illegal (?:host|domain)|domain (?:is )?not reachable|invalid domain(?: name)?\b|\b[\w-]+(?:\.[\w-]+)*\.[a-z]{2,} does not exist/i,
    category: 'dns-mx-failure',
  },
  {
    match:
      /too (?:big|large)|too much mail data|length of (?:the )?data|\b(?:message|mail|e-?mail|size)\b(?:[^.;]|\.(?=\w)){0,20}(?:exceed(?:s|ed)?|(?:is )?larger than|(?:is )?over the (?:size )?limit)|exceed(?:s|ed)?(?:[^.;]|\.(?=\w)){0,30}(?:size|length)|size limit|size violation|maximum (?:message )?size|message length|(?:message|mail) (?:is )?too long/i,
    category: 'message-too-large',
  },
  { match: TOO_LARGE, category: 'message-too-large' },
  {
    match:
      /\bspam|junk|virus|malware|\bmacros?\b|filter rule|quarantin|infected|phish|\bfiltered\b|(?:illegal|prohibited|forbidden|banned) (?:attachment|file)|unsolicited|suspicious|\bcontent\b(?!-)|bulk (?:e-?)?mail|\buce\b|security issue|not accepted for policy reasons|\[CS\d\d\]|\bDT:SPM\b|forbidden[ _]file|spamassassin|(?:attachment|file)(?:[^.;]|\.(?=\w)){0,20}(?:not allowed|blocked|prohibited|banned)/i,
    category: 'content-spam-block',
  },
  { match: SPAM_WORDS, category: 'content-spam-block' },
  {
    match:
      /relay(?:ing)?\b(?:[^.;]|\.(?=\w)){0,20}(?:denied|not (?:permitted|allowed)|rejected)|relay(?:ing)? disallowed|(?:no|not) relaying|den(?:y|ies|ied) relay|(?:do|does) not relay|unable to relay|allowed rcpthosts|not a gateway|not a local account|isn.t a local account/i,
    category: 'policy-rejection',
    reason: "the recipient's server does not accept mail for this domain from us (relay denied)",
  },
  // No permission, or a policy named, in the languages receivers answer in ("Sie besitzen nicht
  // die Berechtigung", "Naruszenie zasad").
  { match: POLICY_WORDS, category: 'policy-rejection' },
  // "Service refused, please try later" (Orange) says no more than "refused": no reason.
  { match: /service refus/i, category: 'unknown' },
  {
    match:
      /\bpolic(?:y|ies)\b|prohibit|(?:does ?n[o']t|do not|doesn't) accept (?:e-?)?mail (?:for|from)|(?:domain|address) (?:is )?not (?:configured|hosted)|not hosted here|rejected by (?:the )?recipient['’]?s? (?:\w+ )?(?:rules?|filters?)|chosen to reject|not a subscriber|subscribers only|bounce verification|not (?:whitelisted|allow-?listed)|multi-recipient bounce|bounce messages? (?:can|may) have only one recipient|not a member of (?:this|the) (?:mailing )?list|members only|closed (?:mailing )?list|\b(?:no|not have|without) (?:the )?permissions?\b|line limit|not (?:permitted|allowed|authori[sz]ed)|access denied|\bdenied\b|\brefused\b|\bblocked\b|\bforbidden\b|\brestricted\b|rejected by (?:the )?destination/i,
    category: 'policy-rejection',
  },
  // RFC 5321's stock 550 text and Exim's verdict when no router takes the address: weaker
  // evidence than the phrases above, so they only count when nothing more specific matched.
  {
    match:
      /(?:mailbox|recipient) (?:is )?(?:temporarily )?(?:unavailable|not available)|mailbox (?:name )?not allowed/i,
    category: 'invalid-recipient',
    dead: true,
    reason: "the recipient's server says the mailbox is unavailable",
  },
  // The receiver's own trouble: disk, queue, configuration, internal errors, loops (decisions.md: unknown).
  {
    match:
      /loops? back to myself|out of disk|too many received headers|forwarding loop|too many hops|mail system full|temporar(?:y|ily) (?:local |system |server )?(?:problem|error|failure)|local (?:problem|error)|(?:server|system|configuration) (?:error|problem|failure)|internal (?:resource|error|server)|resources? (?:are |is )?temporarily unavailable|insufficient (?:system|disk)|system (?:storage|resources)|disk (?:space|full)|queue file|hop count|mail loop|loop detected|ldap server|temporarily rejected/i,
    category: 'unknown',
  },
  {
    match:
      /(?<!mailbox )\bbusy\b|(?:unable|failed) to connect|could not connect|service (?:is )?(?:temporarily )?(?:not available|unavailable)|closing (?:transmission )?(?:channel|connection)|connection (?:timed out|refused|reset|closed|lost|dropped)|connection (?:\w+ ){0,3}(?:is |was )?(?:broken|dropped)|lost (?:incoming )?connection|no route to host|timed out|timeout|not responding|maximum-time-expired|not delivered within \d+ (?:hours|days)/i,
    category: 'connection-error',
  },
  // A reply that names our IP and gives no other reason is about our sending host: its reputation
  // (the labelled corpus read "550 black ip", "IP is Hangup", "ip in prison" so).
  { match: /(?<![\w.-])IP(?![\w.-])|\bip\b(?![.-]\w)/, category: 'reputation-blocklist' },
  // "Come back later" is the greylisting filters' own answer (milter-greylist's "please come
  // back later"); a bare "try again later" says the reply is temporary, not why: the labelled
  // corpus read it as greylisting 4 times in 12, so it is unknown, the reply with no reason.
  { match: /come back later/i, category: 'greylisting' },
  {
    match: /try (?:again )?later|please (?:retry|try again)|retry (?:again )?later|temporarily deferred/i,
    category: 'unknown',
  },
];
