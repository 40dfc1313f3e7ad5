import { describe, expect, it } from 'vitest';
import { classifyReply } from './classify.ts';

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

  it('is soft and kept when a 4xx says it', () => {
    expect(at('Recipient not found in the directory, try again later', 450)).toMatchObject({
      outcome: 'retry',
      suppress: false,
    });
  });
});
