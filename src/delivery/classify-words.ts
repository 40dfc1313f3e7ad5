// The words receivers answer in, one language (or group of languages) a row: what names the
// recipient (its address, mailbox, user, account, list) and what says it does not exist, is
// disabled or invalid; what says a mailbox is full or a message too large; too many; a blocked
// IP and black lists; spam; greylisting; permission and policy; "later"; hedges. The data only:
// classify-languages.ts builds the regexes the rules of classify-rules.ts read with.
// Stems end where the language inflects ("desconocid" is desconocido and desconocida). Each
// entry is a regex alternation, written for the `iu` flags (\p{L} boundaries, no \b).
// Past 500 lines (style.md): a table of data, one row a language, with no logic to split.

export interface Words {
  /** The recipient's address, mailbox, user or account. */
  recipient: string;
  /** Said of the recipient: it does not exist, is unknown, not found. */
  dead: string;
  /** Said of the recipient: it is unavailable (RFC 5321's "mailbox unavailable"), disabled, blocked. */
  disabled: string;
  /** Said of an address: it is invalid, which may mean its syntax, not that it does not exist. */
  invalid: string;
  /** Your (the reader's: our sender's) address, account: never the recipient's. */
  yours: string;
  /** A mailbox. */
  mailbox: string;
  /** Said of a mailbox: it is full. */
  full: string;
  /** Said of a message or its size: too large. */
  tooLarge: string;
  /** Too many (connections, messages, recipients). */
  tooMany: string;
  /** Blocked, banned: said of an IP it names our sending host. */
  blocked: string;
  /** A block list, black list. */
  blockList: string;
  /** Unwanted mail, spam, a virus. */
  spam: string;
  /** Greylisting. */
  greyList: string;
  /** Later, temporary. */
  later: string;
  /** Permission, authorisation (as in "you have no permission to post"). */
  permission: string;
  /** A policy or rule of the receiver, or its violation. */
  policy: string;
  /** May, might, perhaps: the receiver is not sure ("the group may not exist"). */
  hedge: string;
}

export const LANGUAGES: readonly Partial<Words>[] = [
  // English: only the pairs that classify-rules.ts's phrases do not already read ("invalid"
  // recipient is dead there, as the labellers read it).
  {
    recipient:
      'recipient|addressee|user(?:name)?|mailbox|mail box|e-?mail address|address|account|local[- ]?part|person|(?:mailing )?list',
    dead: "unknown|invalid|not found|(?:does|do) not exist|doesn['’]?t exist|not (?:a )?known|(?:could|can)(?:n['’]t| ?not) (?:be )?(?:found|located)|(?:unable|failed) to (?:find|locate)|(?:could|can)(?:n['’]t| ?not) find|no (?:such|record of)|not (?:in|on|listed in) (?:the |our |this )?(?:directory|system|server)|does not reside|(?:does not|doesn['’]t) have an? (?:account|mailbox)|no (?:account|user|mailbox) (?:by|with|for) (?:that|this)",
    disabled:
      'cancel+ed|obsolete|no longer (?:active|valid|in (?:use|service)|works? (?:here|for)|exists?|with)|left the (?:company|organi[sz]ation)',
    yours: 'your|sending',
  },
  // German
  {
    recipient: 'empfänger|benutzer|nutzer|postfach|e-?mail-?adresse|mailadresse|adresse|konto|liste',
    disabled: 'nicht verfügbar|deaktiviert|gesperrt|stillgelegt',
    dead: 'unbekannt|existiert nicht|nicht vorhanden|nicht gefunden|gibt es nicht|nicht bekannt',
    invalid: 'ungültig',
    yours: 'ihre?[mnrs]?|deine?[mnrs]?',
    mailbox: 'postfach|mailbox|speicher',
    full: 'voll(?!\\p{L})|überfüllt|kontingent überschritten|quota überschritten|speicherplatz',
    tooLarge: 'zu gro(?:ß|ss)|größe überschr|grösse überschr|zu umfangreich',
    tooMany: 'zu viele',
    blocked: 'gesperrt|blockiert|sperr',
    blockList: 'schwarze[nr]? liste|sperrliste',
    spam: 'unerwünscht|virus|viren',
    greyList: 'grauliste|greylist',
    later: 'später|vorübergehend|temporär|verzögert',
    hedge: 'möglicherweise|vielleicht|eventuell',
    permission: 'berechtigung',
    policy:
      'richtlinie|regelversto|nicht gestattet|nicht erlaubt|verboten|untersagt|unzulässig|nichtmitglied|nur mitglieder|nicht zur veröffentlichung zugelassen|nicht genehmigt|unterliegt einschränkungen|mehrteilig|inhaltstyp',
  },
  // French
  {
    recipient: 'destinataire|utilisateur|adresse|bo[iî]te|compte|courriel|liste',
    disabled: 'indisponible|désactivé|suspendu|bloqué|fermé|archivé',
    dead: "inconnu|n['’]est pas (?:une? )?(?:\\p{L}+ )?connue?|n['’]existe pas|introuvable|inexistant|non trouvé|n['’]a pas (?:pu )?été trouvé|n['’]accepte plus",
    invalid: "invalide|n['’]est pas valide",
    yours: 'votre|vos|ton|ta|tes',
    mailbox: 'bo[iî]te',
    full: 'plein|quota (?:est )?dépassé|dépass\\p{L}* (?:son |le |de )?quota',
    tooLarge: 'trop (?:gros|grand|lourd|volumineu)|taille (?:maximale )?dépass|trop (?:importante?|longue?)',
    tooMany: 'trop de (?:connexions|messages|courriels|destinataires|mails|e-?mails)',
    blocked: 'bloqu|banni',
    blockList: 'liste noire',
    spam: 'pourriel|indésirable|virus',
    greyList: 'liste grise',
    later: 'plus tard|temporaire|retardé',
    hedge: 'il se peut|peut-être|pourrai',
    permission: 'autorisation|autorisé|pas la permission',
    policy:
      'politique|règle|violation|interdit|pas autorisé|non autorisé|non[- ]membres|seuls les (?:abonnés|membres)|pas été approuvé|liste est restreinte|rejeter vos messages',
  },
  // Spanish
  {
    recipient: 'destinatario|usuario|buz[oó]n|direcci[oó]n|cuenta|casilla|lista',
    disabled: 'no (?:está )?disponible|desactivad|suspendid|bloquead|inactiv',
    dead: 'desconocid|no existe|inexistente|no encontrad|no se (?:pudo |puede |ha podido )?encontr',
    invalid: 'no (?:es )?v[aá]lid|inv[aá]lid',
    yours: 'su|sus|tu|tus',
    mailbox: 'buz[oó]n|casilla',
    full: 'llen[oa]|agotad|cuota (?:excedida|superada)|excedi\\p{L}* (?:la |su )?cuota',
    tooLarge: 'demasiado grande|tamaño (?:máximo )?(?:excedido|superado)|demasiado larg',
    tooMany: 'demasiad[oa]s (?:conexiones|mensajes|correos|destinatarios)',
    blocked: 'bloquead|bloqueo|prohibid',
    blockList: 'lista negra',
    spam: 'correo no deseado|no solicitado|virus',
    greyList: 'lista gris',
    later: 'más tarde|mas tarde|temporal|retrasad|demorad',
    hedge: 'quizás?|tal vez|puede que|podría',
    permission: 'permisos?|autorizad|autorización',
    policy:
      'política|regla|infracción|prohibid|no (?:se )?(?:les )?permit|no está permitid|no se permiten|no estén suscritos|no (?:fue|ha sido) aprobad|multipartes',
  },
  // Italian
  {
    recipient: 'destinatario|utente|casella|indirizzo|account|lista',
    disabled: 'non (?:è )?disponibile|disattivat|sospes|bloccat|inattiv',
    dead: 'sconosciut|inesistente|non esiste|non trovat|non è stat[oa] trovat|non è stato possibile trovare',
    invalid: 'non (?:è )?valid',
    yours: 'il suo|la sua|il tuo|la tua|vostr[oa]',
    mailbox: 'casella',
    full: 'pien[ao]|quota (?:superata|esaurita)',
    tooLarge: 'troppo grand|dimensione (?:massima )?superata|troppo lung',
    tooMany: 'tropp[ie] (?:connessioni|messaggi|destinatari|email)',
    blocked: 'bloccat|blocco',
    blockList: 'lista nera',
    spam: 'indesiderat|virus',
    greyList: 'lista grigia',
    later: 'più tardi|temporane|ritardat',
    hedge: 'potrebbe|forse|può darsi',
    permission: 'autorizzazion|autorizzat|permess',
    policy:
      'politic|regole|violazione|vietat|proibit|non (?:è )?(?:permess|consentit|ammess)|non iscritti|non è stato approvato|lista è ristretta|rifiutare i tuoi messaggi',
  },
  // Portuguese
  {
    recipient:
      'destinat[aá]rio|usu[aá]rio|utilizador|endere[cç]o|caixa (?:postal|de correio|de e-?mail)|conta de (?:e-?mail|correio)|lista',
    disabled: 'indispon[ií]vel|n[aã]o (?:está )?dispon[ií]vel|desativad|suspens|bloquead|inativ',
    dead: 'desconhecid|n[aã]o existe|inexistente|n[aã]o encontrad|n[aã]o foi (?:possível )?encontrad',
    invalid: 'inv[aá]lid',
    yours: 'seu|sua|teu|tua',
    mailbox: 'caixa',
    full: 'chei[ao]|cota (?:excedida|esgotada)',
    tooLarge: 'muito grande|tamanho (?:máximo )?excedido',
    tooMany: 'muit[ao]s (?:conex|mensagens|destinat|e-?mails)',
    blocked: 'bloquead|bloqueio',
    blockList: 'lista negra',
    spam: 'indesejad|não solicitad|vírus',
    greyList: 'lista cinza',
    later: 'mais tarde|temporári|atrasad',
    hedge: 'pode não|talvez|possivelmente|poderá',
    permission: 'permiss[aã]o|autoriza[cç][aã]o|autorizad',
    policy:
      'política|regra|violação|proibid|não (?:é )?permitid|desautorizad|não membros|somente assinantes|não foi aprovad|lista é restrita',
  },
  // Dutch
  {
    recipient: 'ontvanger|gebruiker|adres|mailbox|postvak|postbus|account|lijst',
    disabled: 'niet beschikbaar|gedeactiveerd|geblokkeerd|opgeheven',
    dead: 'onbekend|bestaat niet|niet gevonden',
    invalid: 'ongeldig',
    yours: 'uw|jouw|je',
    mailbox: 'mailbox|postvak|postbus',
    full: 'vol(?!\\p{L})|quotum overschreden',
    tooLarge: 'te groot',
    tooMany: 'te veel',
    blocked: 'geblokkeerd|blokkade',
    blockList: 'zwarte lijst',
    spam: 'ongewenst|virus',
    greyList: 'grijze lijst',
    later: '(?<!\\p{L})later(?!\\p{L})|tijdelijk|vertraagd',
    hedge: 'mogelijk|misschien|wellicht',
    permission: 'toestemming|machtiging|bevoegd',
    policy:
      'beleid|regel|schending|niet toegestaan|verboden|niet-leden|niet goedgekeurd|lijst is besloten|onaanvaardbaar|berichten te weigeren',
  },
  // Polish
  {
    recipient: 'odbiorc|adresat|użytkownik|adres|skrzynk|konto|lista',
    disabled: 'niedostępn|zablokowan|wyłączon|nieaktywn',
    dead: 'nie istnieje|nieznan|nie znaleziono|nie został znalezion',
    invalid: 'nieprawidłow',
    yours: 'tw[oó]j|twoja|pański',
    mailbox: 'skrzynk',
    full: 'pełn|przepełnion|limit (?:został )?przekroczon',
    tooLarge: 'za duż|zbyt duż',
    tooMany: 'zbyt wiele|zbyt dużo|za dużo',
    blocked: 'zablokowan|blokad',
    blockList: 'czarn\\p{L}* list',
    spam: 'niechcian|wirus',
    greyList: 'szar\\p{L}* list',
    later: 'później|tymczasow|opóźnion',
    hedge: 'prawdopodobnie|możliwe',
    permission: 'uprawnie',
    policy:
      'naruszenie|zasad|polityk|zabronion|niedozwolon|zablokował|tylko członkowie|prenumeratorzy|nie została zaakceptowana|ma ograniczenia|odrzucać|wieloczęściow',
  },
  // Czech and Slovak
  {
    recipient: 'příjemc|príjemc|uživatel|používateľ|adres|schránk|účet|konference',
    disabled: 'nedostupn|zablokovan|deaktivovan|zrušen',
    dead: 'neexistuje|neznám|nenalezen|nebyl nalezen|nebol nájden',
    invalid: 'neplatn',
    yours: 'váš|vaše|vaši|tvůj|tvoje|váš',
    mailbox: 'schránk',
    full: 'pln[áa](?!\\p{L})|přeplněn|kvóta (?:byla )?překročen',
    tooLarge: 'příliš velk|príliš veľk|příliš velik',
    tooMany: 'příliš mnoho|príliš veľa',
    blocked: 'zablokován|blokován|zablokovan',
    blockList: 'černé listin|čiernej listin',
    spam: 'nevyžádan|virus',
    greyList: 'šed\\p{L}* listin',
    later: 'později|neskôr|dočasn|zpožděn',
    hedge: 'pravděpodobně|možná|možno',
    permission: 'oprávnění|povolení',
    policy:
      'zásad|porušení|zakázán|nepovolen|smí přispívat jen|môžu prispievať iba|přihlášení uživatelé|nebyl akceptován|není veřejně přístupná',
  },
  // Russian, Ukrainian and Bulgarian
  {
    recipient: 'получател|пользовател|адрес|ящик|адресат|учетн|учётн|одержувач|користувач|скриньк|потребител|рассылк',
    disabled: 'недоступен|недоступн|заблокирован|отключен|деактивирован|заблоковано',
    dead: 'не существует|неизвест|не найден|несуществ|не існує|невідом|не знайден|не съществува|нет такого',
    invalid: 'недействител|недійсн',
    yours: 'ваш\\p{L}*|тво\\p{L}*',
    mailbox: 'ящик|скриньк',
    full: 'переполнен|заполнен|квота превышена|превыш\\p{L}* квот',
    tooLarge: 'слишком больш|занадто велик|твърде голям|надто велик',
    tooMany: 'слишком много|занадто багато|твърде много',
    blocked: 'заблокир|блокир|заблоков',
    blockList: 'черн\\p{L}* спис',
    spam: 'нежелательн|вирус',
    greyList: 'сер\\p{L}* спис',
    later: 'позже|пізніше|временн|тимчасов|задержан|затриман',
    hedge: 'возможно|можливо|ймовірно|вероятно',
    permission: 'разрешени|полномочи|прав на|дозвол',
    policy:
      'политик|правил|нарушени|запрещен|не разрешен|заборонено|забрањено|нису чланови|только ограниченн|многокомпонентн',
  },
  // Turkish
  {
    recipient: 'alıcı|kullanıcı|adres|posta kutusu|hesap|liste',
    disabled: 'kullanılamıyor|devre dışı|askıya alın|kapatıl',
    dead: 'bulunamadı|bulunmamaktadır|mevcut değil|bilinmeyen|(?<!\\p{L})yok(?!\\p{L})',
    invalid: 'geçersiz',
    yours: 'sizin|senin',
    mailbox: 'posta kutusu',
    full: 'dolu(?!\\p{L})|kota aşıldı',
    tooLarge: 'çok büyük|boyut (?:sınırı )?aşıldı',
    tooMany: 'çok fazla',
    blocked: 'engellen|bloke',
    blockList: 'kara liste',
    spam: 'istenmeyen|virüs',
    greyList: 'gri liste',
    later: 'daha sonra|geçici|gecik',
    hedge: 'olabilir|muhtemelen',
    permission: 'izniniz|yetki',
    policy: 'politika|kural|ihlal|yasak|izin verilm|üye olmayan',
  },
  // Indonesian and Malay
  {
    recipient: 'penerima|pengguna|alamat|kotak surat|akun|peti mel',
    disabled: 'tidak tersedia|dinonaktifkan|ditangguhkan|diblokir',
    dead: 'tidak ditemukan|tidak dijumpai|tidak ada|tidak dikenal|tidak wujud',
    invalid: 'tidak valid|tidak sah',
    yours: 'anda',
    mailbox: 'kotak surat|peti mel',
    full: 'penuh',
    tooLarge: 'terlalu besar',
    tooMany: 'terlalu banyak',
    blocked: 'diblokir|disekat',
    blockList: 'daftar hitam|senarai hitam',
    spam: 'virus',
    greyList: 'daftar abu',
    later: 'nanti|sementara|tertunda',
    hedge: 'mungkin',
    permission: 'izin|kebenaran',
    policy: 'kebijakan|pelanggaran|dilarang|tidak diizinkan|menolak posting',
  },
  // Vietnamese
  {
    recipient: 'người nhận|người dùng|địa chỉ|hộp thư|tài khoản',
    disabled: 'không khả dụng|bị vô hiệu hóa|bị khóa',
    dead: 'không tồn tại|không tìm thấy',
    invalid: 'không hợp lệ',
    yours: 'của bạn',
    mailbox: 'hộp thư',
    full: 'đầy',
    tooLarge: 'quá lớn',
    tooMany: 'quá nhiều',
    blocked: 'bị chặn',
    blockList: 'danh sách đen',
    spam: 'thư rác|vi-?rút',
    later: 'thử lại sau|tạm thời|bị trì hoãn',
    hedge: 'có thể',
    permission: 'quyền',
    policy:
      'chính sách|vi phạm|cấm|không cho phép|không được phép|không thành viên|bị giới hạn|không được chấp nhận|đa phần',
  },
  // Swedish, Danish and Norwegian
  {
    recipient: 'mottagar|mottaker|modtager|användar|bruger|bruker|adress|brevlåd|postkasse|postlåd|konto|listan|liste',
    disabled: 'inte tillgänglig|ikke tilgængelig|ikke tilgjengelig|spärrad|deaktiverad|deaktiveret|deaktivert',
    dead: 'gick inte att hitta|finns inte|findes ikke|finnes ikke|okänd|ukendt|ukjent|hittades inte|ikke fundet|ikke funnet|eksisterer ikke',
    invalid: 'ogiltig|ugyldig',
    yours: 'din|ditt|dina|dine',
    mailbox: 'brevlåd|postkasse|postlåd|inkorg',
    full: 'full(?!\\p{L})|fuld(?!\\p{L})|kvot\\p{L}* (?:är )?överskriden|kvote (?:er )?overskredet',
    tooLarge: 'för stor|for stor',
    tooMany: 'för många|for mange',
    blocked: 'blockerad|spärrad|blokeret|blokkert|sperret',
    blockList: 'svartlist|sortlist',
    spam: 'skräppost|oönskad|uønsket',
    greyList: 'gråliste|grålista',
    later: 'senare|senere|tillfällig|midlertidig|försenad|forsinket',
    hedge: 'kanske|eventuellt|möjligen|måske|kanskje|muligvis|muligens',
    permission: 'behörighet|tillstånd|tilladelse|tillatelse',
    policy:
      'policy|regel|brott mot|förbjud|ej tillåt|inte tillåt|ikke tilladt|ikke lov|ikke tillatt|forbudt|tillåter inte|medlem for|måste vara medlem|prenumeranter|inte godkänt|ikke godkendt|ikke godkjent|begränsad|begrænset|begrenset|afvise post',
  },
  // Finnish
  {
    recipient: 'vastaanottaja|käyttäjä|osoite|postilaatikko|tili|lista',
    disabled: 'ei ole käytettävissä|suljettu|poistettu käytöstä',
    dead: 'ei ole olemassa|tuntematon|ei löydy|ei löytynyt',
    invalid: 'virheellinen|ei kelpaa',
    yours: 'sinun|teidän',
    mailbox: 'postilaatikko',
    full: 'täynnä|kiintiö ylitetty',
    tooLarge: 'liian suuri|liian iso|liian pitkä',
    tooMany: 'liian monta|liikaa',
    blocked: 'estetty',
    blockList: 'mustalla listalla|musta lista',
    spam: 'roskaposti',
    later: 'myöhemmin|tilapäi|viivästy',
    hedge: 'ehkä|saattaa|voi olla',
    permission: 'oikeu|lupa',
    policy: 'käytäntö|sääntö|kielletty|ei salli|ei sallita|ei hyväksytty',
  },
  // Hungarian
  {
    recipient: 'címzett|felhasználó|postafiók|lista',
    disabled: 'nem elérhető|letiltva|felfüggesztve',
    dead: 'nem létezik|ismeretlen|nem található|nincs',
    invalid: 'érvénytelen',
    yours: 'az ön|a te',
    mailbox: 'postafiók',
    full: 'megtelt|tele(?!\\p{L})',
    tooLarge: 'túl nagy',
    tooMany: 'túl sok',
    blocked: 'letiltva|tiltott|blokkolva',
    blockList: 'feketelist',
    spam: 'kéretlen',
    later: 'később|ideiglenes|késik|késleltet',
    hedge: 'talán|valószínűleg',
    permission: 'engedély|jogosultság',
    policy: 'szabály|irányelv|tiltva|tiltott|nem megengedett|ki van tiltva|utasitsam el',
  },
  // Greek
  {
    recipient: 'παραλήπτ|χρήστ|διεύθυνσ|γραμματοκιβώτιο|λογαριασμ|λίστα',
    disabled: 'μη διαθέσιμ|απενεργοποιημέν',
    dead: 'δεν υπάρχει|άγνωστ|δεν βρέθηκε',
    invalid: 'μη έγκυρ',
    yours: 'σας|σου',
    mailbox: 'γραμματοκιβώτιο',
    full: 'γεμάτ|πλήρες',
    tooLarge: 'πολύ μεγάλ',
    tooMany: 'πάρα πολλ|πολλές συνδέσεις',
    blocked: 'αποκλεισ|μπλοκ',
    blockList: 'μαύρη λίστα',
    spam: 'ανεπιθύμητ',
    later: 'αργότερα|προσωριν|καθυστέρ',
    hedge: 'ίσως|ενδέχεται',
    permission: 'δικαίωμα|άδεια',
    policy: 'πολιτική|κανόν|παραβίαση|απαγορ|δεν επιτρέπ|μέλη της λίστας|δεν εγκρίθηκε|ελεγχόμενη',
  },
  // Romanian
  {
    recipient: 'destinatar|utilizator|adres|căsuț|casut|contul|lista',
    disabled: 'indisponibil|dezactivat|suspendat',
    dead: 'nu există|nu exista|necunoscut|nu a fost găsit',
    invalid: 'invalid[aă]?',
    yours: 'dumneavoastră|tău|ta',
    mailbox: 'căsuț|casut',
    full: 'plin(?!\\p{L})|plină|cota (?:a fost )?depășit',
    tooLarge: 'prea mare',
    tooMany: 'prea mult|prea multe',
    blocked: 'blocat',
    blockList: 'lista neagră',
    spam: 'nesolicitat',
    later: 'mai târziu|temporar|întârziat',
    hedge: 'posibil',
    permission: 'permisiun',
    policy: 'politic|regul|încălcare|interzis|nu este permis|restric[tţț]ionat|nu a fost aprobat',
  },
  // Japanese
  {
    recipient: '宛先|あて先|ユーザ|メールボックス|アドレス|アカウント|受信者|リスト',
    disabled: '利用できません|無効になって|停止されて',
    dead: '存在しません|存在しない|見つかりません|不明(?!な)|はありません',
    invalid: '無効',
    yours: 'あなたの|お客様の',
    mailbox: 'メールボックス|容量',
    full: '一杯|いっぱい|満杯|超過|不足',
    tooLarge: '大きすぎ|サイズ(?:が|の)?(?:上限|制限)(?:を)?超え|長すぎ',
    tooMany: '多すぎ',
    blocked: 'ブロック|拒否',
    blockList: 'ブラックリスト',
    spam: '迷惑メール|ウイルス',
    greyList: 'グレーリスト',
    later: 'しばらくしてから|後ほど|一時的|遅延',
    hedge: '可能性|かもしれ',
    permission: '権限|許可',
    policy: 'ポリシー|規約|違反|禁止|受け付けません|会員以外|承認',
  },
  // Chinese
  {
    recipient: '收件人|收信人|收件方|用户|用戶|邮箱|郵箱|信箱|地址|帐户|账户|帳戶|帳號|账号|帐号|邮件列表|列表',
    disabled: '已被禁用|已禁用|已冻结|已被冻结|已停用|不可用',
    dead: '不存在|未找到|找不到|未开通|已注销|无此|無此|查无此',
    invalid: '无效|無效',
    yours: '您的|你的',
    mailbox: '邮箱|郵箱|信箱|空间|空間|容量',
    full: '已满|已滿|满了|不足|超过配额|超出配额',
    tooLarge: '过大|過大|太大|超过大小',
    tooMany: '过多|過多|太多|频繁|頻繁',
    blocked: '屏蔽|封禁|封锁|拦截|攔截',
    blockList: '黑名单|黑名單',
    spam: '垃圾邮件|垃圾郵件|病毒',
    greyList: '灰名单',
    later: '稍后|稍後|暂时|暫時|延迟|延遲',
    hedge: '可能',
    permission: '权限|權限|许可|許可',
    policy: '策略|政策|违反|違反|禁止|不允许|不允許|非成员|非會員|受限制|没有经过批准|私人論壇',
  },
  // Korean
  {
    recipient: '수신자|받는 사람|사용자|메일박스|메일함|주소|계정|리스트',
    disabled: '사용할 수 없|비활성|정지된',
    dead: '존재하지 않|찾을 수 없',
    invalid: '유효하지 않',
    yours: '귀하의|당신의',
    mailbox: '메일함|사서함|메일박스',
    full: '가득|초과',
    tooLarge: '너무 큽|너무 큼',
    tooMany: '너무 많',
    blocked: '차단',
    blockList: '블랙리스트',
    spam: '스팸|바이러스',
    later: '나중에|일시적|지연',
    hedge: '일 수',
    permission: '권한|허가',
    policy: '정책|위반|금지|허용되지 않|승인',
  },
  // Arabic, Hebrew, Persian
  {
    recipient:
      'المستلم|المستخدم|العنوان|عنوان|صندوق البريد|الحساب|הנמען|נמען|המשתמש|משתמש|הכתובת|כתובת|תיבת הדואר|گیرنده|کاربر|آدرس|نشانی',
    disabled: 'معطل|غير متاح|מושבת|לא זמינה?|غیرفعال',
    dead: 'غير موجود|غير معروف|لا يوجد|אינו קיים|אינה קיימת|לא קיים|לא קיימת|לא נמצא|לא ידוע|وجود ندارد|یافت نشد|ناشناخته',
    invalid: 'غير صالح|לא תקינה?|نامعتبر',
    yours: 'שלך|شما',
    mailbox: 'صندوق|תיבת|صندوق پستی',
    full: 'ممتلئ|מלאה|پر است',
    tooLarge: 'كبيرة جدا|גדולה מדי|خیلی بزرگ|كبير جدا|גדול מידי|بیش از حد بزرگ',
    tooMany: 'كثير جدا|רבים מדי',
    blocked: 'محظور|חסום|مسدود',
    blockList: 'القائمة السوداء|רשימה שחורה|لیست سیاه',
    later: 'لاحقا|מאוחר יותר|بعدا|موقت|تأخير|עיכוב|تأخیر',
    hedge: 'ربما|ייתכן|אולי|ممکن است|شاید',
    permission: 'إذن|صلاحية|הרשאה|אישור|مجوز|اجازه',
    policy: 'سياسة|מדיניות|سیاست|غير مسموح|ممنوع|לא רשאי|אסור|מוגבלת|לא אושר|منع شده|غیرمجاز',
  },
  // Catalan, Galician, Basque, Croatian, Serbian, Slovenian, Estonian, Interlingua: the words of
  // list managers' refusals (Mailman, Sympa, ezmlm), which speak them.
  {
    recipient: 'llista|rolda|zerrenda|lista|popis|seznam|listi',
    dead: 'no existeix|non existe|ez dago|ne postoji|ne obstaja|ei ole olemas',
    tooLarge: 'massa llarg|demasiado grande|luzeegia|previše velik|prevelik|liiga suur',
    policy:
      'no se.ls permet|no està permesa|non está permitida|non se permiten|prohibido|debekatuta|nije dozvoljeno|nedozvoljen|zabranjen|ni dovoljeno|prepovedan|ei lubata|ei ole (?:\\p{L}+ ){0,3}lubatud|keelatud|non es permittite|no-membres|non-membros|nisu članovi|liikmed|non esseva approbate|non se aprobou|restrinxida|nije odobren|ni bilo odobreno|omejen|mustas nimekirjas',
  },
  // Thai
  {
    recipient: 'ผู้รับ|ผู้ใช้|ที่อยู่|กล่องจดหมาย|บัญชี',
    disabled: 'ถูกระงับ|ใช้งานไม่ได้',
    dead: 'ไม่มีอยู่|ไม่พบ',
    invalid: 'ไม่ถูกต้อง',
    yours: 'ของคุณ',
    mailbox: 'กล่องจดหมาย',
    full: 'เต็ม',
    tooLarge: 'ใหญ่เกินไป',
    tooMany: 'มากเกินไป',
    blocked: 'ถูกบล็อก',
    later: 'ภายหลัง|ชั่วคราว|ล่าช้า',
    hedge: 'อาจ',
    permission: 'สิทธิ์|อนุญาต',
    policy: 'นโยบาย',
  },
];
