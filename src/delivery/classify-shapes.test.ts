import { describe, expect, it } from 'vitest';
import { classifyReply, codesIn } from './classify.ts';
import { classifyPublished } from '../../test/bounce-corpus.ts';

// The general shapes of a dead address (issue 29): the recipient as the subject of a denial
// of existence or validity, in English and in the languages receivers answer in; and the same
// words about our sender, which never suppress.

const at = (text: string, code = 550) => classifyReply({ code, text });

describe('a dead address by its shape', () => {
  it.each([
    'Recipient <ada@example.org> not found in the directory',
    'The address you sent to is not valid',
    'Mailbox ada does not exist here',
    'Empfänger unbekannt',
    'Benutzer ada@example.de ist unbekannt',
    'Destinataire inconnu',
    'Usuario desconocido',
    'Utente sconosciuto',
    'Destinatário não existe',
    'Ontvanger onbekend',
    'Skrzynka nie istnieje',
    'Příjemce neexistuje',
    'Пользователь не существует',
    '宛先が存在しません',
    '收件人不存在',
    '수신자가 존재하지 않습니다',
    'Mailbox is frozen',
    'There is no such active account',
    'failure: 192.0.2.1_does_not_like_recipient./Remote_host_said:_550_No_such_user/Giving_up',
    // The pairs of classify-languages.ts, in either order: noun then denial, denial then noun.
    'Das Postfach ist nicht vorhanden',
    'Esta cuenta no existe',
    'Utente non trovato',
    'Alıcı bulunamadı',
    'Kullanıcı bulunamadı',
    'Pengguna tidak ditemukan',
    'Người nhận không tồn tại',
    'Modtageren findes ikke',
    'Brukeren finnes ikke',
    'Vastaanottajaa ei löydy',
    'Címzett nem létezik',
    'Ο παραλήπτης δεν υπάρχει',
    'Destinatarul nu există',
    'Получатель не найден',
    'Одержувача не знайдено',
    'No existe el usuario',
    'הנמען אינו קיים',
    'ไม่พบผู้รับ',
    '该邮箱不存在',
    // Accents dropped, as ASCII replies write them; a mailing list is a recipient too.
    'Le compte du destinataire est bloque',
    'Boite du destinataire archivee',
    "List 'announce' does not exist.",
    "La lista 'announce' no existe.",
    "L'adresse suivante n'est pas une liste connue",
  ])('%s: hard, suppressed', (text) => {
    expect(at(text)).toMatchObject({ category: 'invalid-recipient', outcome: 'hard', suppress: true });
  });

  it.each([
    'Sender address <news@example.com> does not exist',
    'Your IP address is not registered with us',
    'Your email address is not valid',
    'Your e-mail address is not registered',
    'Absender unbekannt',
    'Expéditeur inconnu',
    'Remitente desconocido',
    '发件人不存在',
    // "Your" address is our sender's, in any language; an IP address is our host.
    'Ihre E-Mail-Adresse ist unbekannt',
    "Votre adresse n'existe pas",
    'Su dirección no existe',
    'IP-Adresse unbekannt',
    'Adresse IP inconnue',
    // Only a hedge: the receiver is not sure the address is dead (Google Groups' "may not exist").
    'The group or the address you tried to reach may not exist',
    "Il gruppo (libsisimai) che hai tentato di contattare potrebbe non esistere, o l'utente non esiste",
    // An address's syntax is not its existence (qmail's 5.1.3 for any address rule).
    'Sorry, address must include host name. (#5.1.3)',
    'envelope address too long for qq (#5.1.3)',
    // Lotus Domino's wrapper "Unknown address error" around another server's reply: only the reply inside counts.
    "5.1.0 - Unknown address error 550-'Transaction failed. (SPAM_SUSPECT:IP_CONTROL)'",
    // "Is not … allowed" is not "does not exist" (Estonian "ei ole … lubatud").
    'Mitmeosalisi kirju ei ole sellesse listi lubatud saata.',
    // "Invalid" may be the syntax: refused, not dead.
    'Dirección no válida',
    'Adresse invalide',
  ])('%s: never suppressed', (text) => {
    expect(at(text).suppress).toBe(false);
  });

  it('is soft and kept when only the code says dead and the words speak of the message', () => {
    expect(
      classifyReply({ code: 521, enhanced: '5.2.1', text: ': we will not accept delivery of this message.' }),
    ).toMatchObject({ outcome: 'soft', suppress: false });
    expect(classifyReply({ code: 550, enhanced: '5.1.1', text: '<ada@example.org>' })).toMatchObject({
      suppress: true,
    });
  });

  it('keeps a mailbox the code alone calls disabled (X.2.1 may be temporary), and suppresses when the words say dead', () => {
    // RFC 3463: X.2.1 "may be a permanent error … or a transient error if the mailbox is only temporarily disabled".
    expect(classifyReply({ code: 550, enhanced: '5.2.1', text: '<ada@example.org>: rejected' })).toMatchObject({
      category: 'invalid-recipient',
      outcome: 'soft',
      suppress: false,
    });
    expect(
      classifyReply({ code: 550, enhanced: '5.2.1', text: 'The email account that you tried to reach is disabled.' }),
    ).toMatchObject({ category: 'invalid-recipient', outcome: 'hard', suppress: true });
  });

  it('is temporary when the words say later in another language, and not when they deny trying again', () => {
    expect(at('Postfach unbekannt, bitte versuchen Sie es später')).toMatchObject({ suppress: false });
    expect(at('Destinataire inconnu, réessayez plus tard')).toMatchObject({ suppress: false });
    expect(at("User unknown. I'm not going to try again; this message has been in the queue too long.")).toMatchObject({
      outcome: 'hard',
      suppress: true,
    });
    expect(at('User unknown: retry timeout exceeded')).toMatchObject({ outcome: 'hard', suppress: true });
    expect(at('User unknown, will retry')).toMatchObject({ suppress: false });
  });

  it('reads "the email address" as about the address, not the message', () => {
    expect(
      classifyReply({ code: 550, enhanced: '5.1.1', text: "The email address you entered couldn't be found" }),
    ).toMatchObject({ outcome: 'hard', suppress: true });
  });

  it('is soft and kept when a 4xx says it', () => {
    expect(at('Recipient not found in the directory, try again later', 450)).toMatchObject({
      outcome: 'retry',
      suppress: false,
    });
  });
});

describe('the other categories in the languages receivers answer in', () => {
  it.each([
    ['Die Nachricht ist zu groß', 'message-too-large'],
    ['El mensaje es demasiado grande', 'message-too-large'],
    ['Сообщение слишком большое', 'message-too-large'],
    ['メッセージのサイズが大きすぎます', 'message-too-large'],
    ['Message exceeded maximum allowed size', 'message-too-large'],
    ['This message is larger than the current system limit', 'message-too-large'],
    ['Mailbox size exceeded', 'mailbox-full'],
    ['La casella è piena', 'mailbox-full'],
    ['Posta kutusu dolu', 'mailbox-full'],
    ['Zu viele Verbindungen von Ihrer IP', 'rate-limited'],
    ['Слишком много писем, попробуйте позже', 'rate-limited'],
    ['Ihre IP-Adresse wurde gesperrt', 'reputation-blocklist'],
    ['Su IP está en nuestra lista negra', 'reputation-blocklist'],
    ['Votre IP est bloquée', 'reputation-blocklist'],
    ['您的IP已被屏蔽', 'reputation-blocklist'],
    ['Nachricht als unerwünscht eingestuft', 'content-spam-block'],
    ['Mensagem recusada: vírus encontrado', 'content-spam-block'],
    ['Greylisting aktiv, Grauliste', 'greylisting'],
    // List managers' refusals in the languages they speak (Mailman, Sympa, ezmlm).
    ['Nichtmitgliedern ist es nicht gestattet, Nachrichten auf dieser Liste zu veröffentlichen.', 'policy-rejection'],
    ["Cette liste est restreinte; votre message n'a pas été approuvé.", 'policy-rejection'],
    ['Tiene prohibido mandar mensajes a esta lista.', 'policy-rejection'],
    ['Niet-leden mogen geen berichten versturen naar deze lijst.', 'policy-rejection'],
    ['Отправка сообщений в эту рассылку запрещена.', 'policy-rejection'],
    ['您被禁止往该列表发送信息。', 'policy-rejection'],
    ['Mitmeosalisi kirju ei ole sellesse listi lubatud saata.', 'policy-rejection'],
    ['Der Textteil Ihrer Nachricht war mit 12345 Bytes zu umfangreich.', 'message-too-large'],
    ['Missatge massa llarg', 'message-too-large'],
    ["La llista 'announce' no existeix.", 'invalid-recipient'],
  ])('%s: %s', (text, category) => {
    expect(at(text).category).toBe(category);
  });
});

describe('codesIn: the codes of a reply known only as text', () => {
  it.each([
    ['550 5.1.1 User unknown', 550, '5.1.1'],
    ['421-4.7.0 Try again later', 421, '4.7.0'],
    ["Remote Server returned '550 5.1.1 RESOLVER.ADR.RecipNotFound; not found'", 550, '5.1.1'],
    ['host mx.example[192.0.2.1] said: 452 4.2.2 Mailbox full (in reply to RCPT TO command)', 452, '4.2.2'],
    ['#550 4.4.7 QUEUE.Expired; message expired ##', 550, '4.4.7'],
    ['LMTP error after DATA: 450 TEMPERROR: retry timeout exceeded', 450, undefined],
    ['Sorry, no mailbox here by that name. (#5.1.1)', undefined, '5.1.1'],
    ['connect to mx.example[192.0.2.1]:25: Connection refused', undefined, undefined],
    ['User unknown', undefined, undefined],
  ])('%s', (text, code, enhanced) => {
    expect(codesIn(text)).toEqual({ code, enhanced });
  });
});

describe('replies as MTAs and DSNs word them, without the usual phrases', () => {
  it.each([
    ['RESOLVER.ADR.RecipNotFound; not found', 'invalid-recipient', 'hard'],
    ['RESOLVER.ADR.ExRecipNotFound; not found', 'invalid-recipient', 'hard'],
    ['550 The mailbox you tried to reach could not be found', 'invalid-recipient', 'hard'],
    ['550 This address is no longer in service', 'invalid-recipient', 'hard'],
    ['550 Addressee left the company', 'invalid-recipient', 'hard'],
    ['550 Non-existent email address', 'invalid-recipient', 'hard'],
    ['TLS negotiation failed with error', 'connection-error', 'soft'],
    ['Cannot start TLS: handshake failure', 'connection-error', 'soft'],
    ['Remote host closed connection in response to EHLO mx.example', 'connection-error', 'soft'],
    ['connect to mx.example[192.0.2.1]:25: Network is unreachable', 'connection-error', 'soft'],
    ['Message delivery has been delayed: no connection could be established', 'connection-error', 'retry'],
    ['no valid MX hosts found', 'dns-mx-failure', 'soft'],
    [
      'Host or domain name not found. Name service error for name=mx.example type=A: Host not found',
      'dns-mx-failure',
      'soft',
    ],
    ['550 5.7.1 Mail from 192.0.2.1 refused by blackhole site', 'reputation-blocklist', 'soft'],
    ['550 5.7.1 Sender Policy Framework of example.com denied your IP address', 'auth-failure', 'soft'],
    ['554 5.6.0 Message contains invalid header', 'policy-rejection', 'soft'],
    ['550 not relaying to that domain', 'policy-rejection', 'soft'],
    ['TLS it not available or unauthenticated but required (REQUIRETLS)', 'policy-rejection', 'soft'],
    ['connection limit reached for all hosts', 'rate-limited', 'retry'],
    [
      '421 mwinf5c77 ME Service refuse. Veuillez essayer plus tard. Service refused, please try later.',
      'unknown',
      'retry',
    ],
    ['451 4.7.1 Please try again later', 'unknown', 'retry'],
    ['451 4.7.1 Greylisting in action, please come back later', 'greylisting', 'retry'],
    [
      '550 5.1.1 <a@example.org>: Recipient address rejected: undeliverable address: mail for example.org loops back to myself',
      'unknown',
      'soft',
    ],
    ['554 5.4.0 Error: too many hops', 'unknown', 'soft'],
    [
      'Sie besitzen nicht die Berechtigung, die Nachricht im Auftrag dieses Benutzers zu senden.',
      'policy-rejection',
      'soft',
    ],
    ["Vous n'avez pas l'autorisation de publier dans ce groupe", 'policy-rejection', 'soft'],
    ['You are not a member of this mailing list <a@example.org>.', 'policy-rejection', 'soft'],
    ['Out of disk space (#1.03)', 'unknown', 'soft'],
    ["The number of messages in recipient's mailbox exceeded the local limit.", 'mailbox-full', 'retry'],
    ["This person's account is exceeding their quota.", 'mailbox-full', 'retry'],
    ['Die Übermittlung an folgende Empfänger wurde verzögert.', 'unknown', 'retry'],
    ['501 Bad address syntax', 'policy-rejection', 'soft'],
    ['550 black ip.', 'reputation-blocklist', 'soft'],
    ['550 IP is Hangup', 'reputation-blocklist', 'soft'],
    ["Sorry, I couldn't find a mail exchanger or IP address. (#5.4.4)", 'dns-mx-failure', 'soft'],
    ['553 host denies relay.', 'policy-rejection', 'soft'],
    ['550 We do not relay for that domain', 'policy-rejection', 'soft'],
    ['550 This server does not accept mail for this domain', 'policy-rejection', 'soft'],
    ['550 Only internal senders may send to this address', 'policy-rejection', 'soft'],
    ["550 The sender is on the recipient's block list", 'policy-rejection', 'soft'],
    ['554 Message rejected: Email is missing a required header', 'policy-rejection', 'soft'],
    ['550 Subject contains invalid characters', 'policy-rejection', 'soft'],
    ['550 5.1.0 Naruszenie zasad, zobacz https://support.example.pl/kb/1', 'policy-rejection', 'soft'],
    ['451 out of allow RCPT numbers.', 'rate-limited', 'retry'],
    ['All connection backlog slots full due to max delivery attempts per hour.', 'rate-limited', 'retry'],
    ['Hostname cannot be resolved', 'dns-mx-failure', 'soft'],
    ['host map: lookup (example.org): deferred', 'dns-mx-failure', 'retry'],
    ['552 MS-Office file containing VBA macros found inside of the email', 'content-spam-block', 'soft'],
    ['552 Account(s) <a@example.org> does not have enough space', 'mailbox-full', 'retry'],
    ['452 4.4.5 Insufficient disk space; try again later', 'unknown', 'retry'],
    ['504 5.5.2 <foo>: Recipient address rejected: need fully-qualified address', 'policy-rejection', 'soft'],
    ['553 5.6.7 SMTPUTF8 is required for non-ASCII recipients', 'policy-rejection', 'soft'],
    ['550 5.7.0 Refusing to deliver a quarantined message', 'content-spam-block', 'soft'],
    ['451 Cannot resolve <a@example.org> at this time', 'dns-mx-failure', 'retry'],
    ['554 Too many nonmail commands', 'rate-limited', 'retry'],
    [
      '451 4.3.0 <a@example.org>... First-time sender tempfailed as anti-spam measure; please try again',
      'greylisting',
      'retry',
    ],
    ['412 You are not whitelisted by this recipient, please try again later.', 'policy-rejection', 'retry'],
    ['500 Invalid Date header.', 'policy-rejection', 'soft'],
    ['550 bounce messages can have only one recipient', 'policy-rejection', 'soft'],
    [
      '550 5.7.1 [BR] Our system has detected an excessively high number of invalid recipients originating from your account.',
      'reputation-blocklist',
      'soft',
    ],
    ['550 5.7.1 Rejected: mail.example.com listed at relays.example.org', 'reputation-blocklist', 'soft'],
    ['550 User not listed in public Name & Address Book', 'invalid-recipient', 'hard'],
    ['MAIL FROM: 550 5.0.0 Mail rejected due to possible SPAM', 'content-spam-block', 'soft'],
    ['550 5.7.0 Message Size Violation', 'message-too-large', 'soft'],
    ['invalid bounce, rcpt address <bob@example.com> rejected by bounce verification.', 'policy-rejection', 'soft'],
  ])('%s: %s, %s', (text, category, outcome) => {
    // Read as the corpus reads a published reply: its codes, else a DSN's failed or delayed.
    expect(classifyPublished(text)).toMatchObject({ category, outcome });
  });
});

it("reads a link's path, not its query string: the sender named there is data, not the reply's subject", () => {
  const c = classifyPublished(
    '550 5.7.1 Message blocked. See https://example.net/bounce?auid=x&sender=user%40example.org',
  );
  expect(c.rule).toEqual({ by: 'text', matched: 'blocked' });
});

it("reads the reply's words, not the words inside an email address", () => {
  expect(at('Delivery to ada@spamfree.example refused').category).toBe('policy-rejection');
  expect(at('<ada@sender.example>: User unknown')).toMatchObject({ category: 'invalid-recipient', suppress: true });
  // Our own address named is still evidence that the reply is about our sender.
  expect(
    classifyReply({ code: 550, text: '<ada@sender.example>: User unknown' }, { senders: ['ada@sender.example'] }),
  ).toMatchObject({ suppress: false, rule: { by: 'sender', matched: 'ada@sender.example' } });
});
