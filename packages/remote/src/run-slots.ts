/**
 * At most N executions at once, and at most a share of them per user; the rest wait their turn.
 * Many clients at once then queue instead of overloading the box, and one user holding every
 * slot with long runs cannot starve the others: a freed slot goes to the first waiter whose user
 * is under their share.
 */
interface Waiter {
  user: string;
  start: () => void;
}

export class RunSlots {
  private active = 0;
  private readonly activeByUser = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly size: number,
    private readonly perUser: number = size,
  ) {}

  async run<T>(user: string, task: () => Promise<T>): Promise<T> {
    // A waiter's slot is taken for it by `release`, so nobody can overtake it in between.
    if (this.canStart(user)) this.take(user);
    else await new Promise<void>((start) => this.waiting.push({ user, start }));
    try {
      return await task();
    } finally {
      this.release(user);
    }
  }

  private canStart(user: string): boolean {
    return this.active < this.size && (this.activeByUser.get(user) ?? 0) < this.perUser;
  }

  private take(user: string): void {
    this.active++;
    this.activeByUser.set(user, (this.activeByUser.get(user) ?? 0) + 1);
  }

  private release(user: string): void {
    this.active--;
    const left = (this.activeByUser.get(user) ?? 1) - 1;
    if (left > 0) this.activeByUser.set(user, left);
    else this.activeByUser.delete(user);
    for (let index = 0; index < this.waiting.length && this.active < this.size; ) {
      const waiter = this.waiting[index] as Waiter;
      if (!this.canStart(waiter.user)) {
        index++;
        continue;
      }
      this.waiting.splice(index, 1);
      this.take(waiter.user);
      waiter.start();
    }
  }
}
