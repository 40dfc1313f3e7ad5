import { z } from 'zod';
import type { ReportDay } from './dmarc.ts';
import { REPORT_DAYS_DEFAULT, REPORT_DAYS_MAX } from './dmarc-service.ts';

/** GET …/domains/:id/reports and `svc domains report --days N`: the days to show, counted back from now. */
export const reportDaysQuerySchema = z.strictObject({
  days: z.coerce.number().int().min(1).max(REPORT_DAYS_MAX).default(REPORT_DAYS_DEFAULT),
});

/** One day and source IP of a domain's DMARC aggregate reports. */
export const reportDayOut = z.object({
  day: z.string(),
  source_ip: z.string(),
  count: z.number().int(),
  spf_pass: z.number().int(),
  dkim_pass: z.number().int(),
  dmarc_pass: z.number().int(),
  own_source: z.boolean(),
  flagged: z.boolean(),
  reporters: z.array(z.string()),
});

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The schema says what the use case returns (a compile-time check). */
export const reportDayAgrees: Same<z.infer<typeof reportDayOut>, ReportDay> = true;
