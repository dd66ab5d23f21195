export * from './nft/index.js';
