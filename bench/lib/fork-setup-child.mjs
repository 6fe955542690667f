// One sample of bench/fork-setup.mjs: create the facade for the project (argv[2]) and fork its
// bench/child directive in-library twice, printing when each call was made (Date.now(), the
// clock the replay server stamps its requests with).
import { createRye } from '../../packages/ryeos/dist/index.js';

const rye = createRye({ projectPath: process.argv[2], env: process.env });
const called = [];
for (let i = 0; i < 2; i++) {
  called.push(Date.now());
  const reply = await rye.execute({ item_id: 'directive:bench/child', thread: 'fork' });
  if (reply.status !== 'success') throw new Error(JSON.stringify(reply));
}
console.log(JSON.stringify({ called }));
